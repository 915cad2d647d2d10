//! The Rechtspraak client: its query builder against a property, its parsers, and
//! every error that looks like success against the fake service on loopback.

use std::collections::BTreeSet;

use besluitbron_fakes::rechtspraak::{BUSY_DAY, FOOTNOTES_ECLI, METADATA_ONLY_ECLI};
use besluitbron_fakes::{FakeConfig, rechtspraak_corpus, serve_rechtspraak};
use quickcheck::{QuickCheck, TestResult};

use super::*;

fn base() -> Url {
    Url::parse("https://data.rechtspraak.nl").unwrap()
}

async fn fake() -> (besluitbron_fakes::FakeHandle, RsClient) {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let handle = serve_rechtspraak(listener, FakeConfig::default()).await.unwrap();
    let client = RsClient::new(handle.base_url(), &HttpConfig::default()).unwrap();
    (handle, client)
}

#[test]
fn only_honoured_parameters_are_written_and_areas_go_out_as_percent_23() {
    let search = RsSearch {
        types: vec![RulingType::Uitspraak],
        creators: vec!["http://psi.rechtspraak.nl/AG DH".into()],
        subjects: vec!["http://psi.rechtspraak.nl/rechtsgebied#strafrecht".into()],
        date_from: Day::parse("2026-11-03"),
        with_text: true,
        max: Some(PageSize::clamped(5000)),
        from: 1000,
        ..RsSearch::default()
    };
    let url = search_url(&base(), &search).unwrap();
    assert_eq!(url.path(), "/uitspraken/zoeken");
    assert_eq!(
        url.query().unwrap(),
        "type=Uitspraak&creator=http%3A%2F%2Fpsi.rechtspraak.nl%2FAG+DH\
         &subject=http%3A%2F%2Fpsi.rechtspraak.nl%2Frechtsgebied%23strafrecht\
         &date=2026-11-03&date=9999-12-31&return=DOC&sort=DESC&from=1000&max=1000"
    );
}

/// Whatever a search holds, its URL parses, stays on the search path, names only
/// honoured parameters, and gives back every value exactly (a reference model: the
/// pairs themselves).
#[test]
fn qc_search_urls_are_well_formed_whatever_goes_in() {
    fn prop(creators: Vec<String>, subjects: Vec<String>, replaces: Option<String>, from: u32, max: u32) -> TestResult {
        let search = RsSearch {
            creators,
            subjects,
            replaces,
            from,
            max: Some(PageSize::clamped(max)),
            with_text: from.is_multiple_of(2),
            sort: if max.is_multiple_of(2) {
                Sort::NewestFirst
            } else {
                Sort::OldestFirst
            },
            ..RsSearch::default()
        };
        let Ok(url) = search_url(&base(), &search) else {
            return TestResult::failed();
        };
        let reparsed = Url::parse(url.as_str()).expect("the URL parses again");
        let honoured: BTreeSet<&str> = SearchParam::ALL.iter().map(|p| p.as_str()).collect();
        let got: Vec<(String, String)> = reparsed.query_pairs().into_owned().collect();
        let want: Vec<(String, String)> = search_pairs(&search)
            .into_iter()
            .map(|(k, v)| (k.as_str().to_owned(), v))
            .collect();
        let max_ok = got
            .iter()
            .filter(|(k, _)| k == "max")
            .all(|(_, v)| v.parse::<u32>().is_ok_and(|n| (1..=MAX_PAGE).contains(&n)));
        TestResult::from_bool(
            reparsed.path() == "/uitspraken/zoeken"
                && reparsed.fragment().is_none()
                && reparsed.host_str() == Some("data.rechtspraak.nl")
                && got.iter().all(|(k, _)| honoured.contains(k.as_str()))
                && got == want
                && max_ok,
        )
    }
    QuickCheck::new()
        .tests(300)
        .quickcheck(prop as fn(Vec<String>, Vec<String>, Option<String>, u32, u32) -> TestResult);
}

#[test]
fn eclis_days_and_moments_are_checked() {
    assert_eq!(
        Ecli::parse(" ecli:nl:hr:2026:1500 ").unwrap().as_str(),
        "ECLI:NL:HR:2026:1500"
    );
    for bad in [
        "",
        "ECLI:NL:HR:2026",
        "ECLI:NL:HR:26:1",
        "ECLI:NL:HR:2026:1/../x",
        "ECLI:NL:HR:2026:1&q=x",
        "LJN:BX1234",
    ] {
        assert!(Ecli::parse(bad).is_none(), "{bad}");
    }
    assert!(Ecli::parse(&format!("ECLI:NL:HR:2026:{}", "1".repeat(60))).is_none());
    assert!(Day::parse("2026-02-30").is_none());
    assert_eq!(Moment::parse("2026-11-01").unwrap().as_str(), "2026-11-01T00:00:00");
    assert!(Moment::parse("2026-11-01T25:00:00").is_none());
}

#[test]
fn notice_pages_are_recognised() {
    assert!(is_notice_page("https://mededeling.rechtspraak.nl/404"));
    assert!(is_notice_page("http://127.0.0.1:9/mededeling/404"));
    assert!(!is_notice_page(
        "https://data.rechtspraak.nl/uitspraken/content?id=ECLI:NL:HR:2026:1"
    ));
}

#[tokio::test]
async fn the_ignored_parameter_trap_the_fake_answers_everything_to_q() {
    let (fake, client) = fake().await;
    let all = rechtspraak_corpus().rulings.len() as u64;
    // What a naive client would send: the service ignores `q` and returns everything.
    let url = http::with_query(
        http::join(PLATFORM, client.base(), "uitspraken/zoeken").unwrap(),
        [("q", "huurrecht"), ("max", "1")],
    );
    let trap = client.feed(url).await.unwrap();
    assert_eq!(trap.total, Some(all), "the words were ignored");
    // What BesluitBron sends for one court on one day: only honoured parameters.
    let search = RsSearch {
        creators: vec![format!(
            "http://standaarden.overheid.nl/owms/terms/{}",
            "Rechtbank_Amsterdam"
        )],
        date_from: Day::parse(BUSY_DAY),
        date_to: Day::parse(BUSY_DAY),
        max: Some(PageSize::clamped(1)),
        ..RsSearch::default()
    };
    let narrow = client.search(&search).await.unwrap();
    assert!(narrow.total.unwrap() < all / 10, "{narrow:?}");
    assert_eq!(fake.requests(), 2);
}

#[tokio::test]
async fn a_busy_day_pages_past_the_1000_boundary_without_gaps() {
    let (_fake, client) = fake().await;
    let corpus = rechtspraak_corpus();
    let mut want: Vec<&str> = corpus
        .rulings
        .iter()
        .filter(|r| r.date == BUSY_DAY)
        .map(|r| r.ecli.as_str())
        .collect();
    want.sort_unstable();
    let mut search = RsSearch {
        date_from: Day::parse(BUSY_DAY),
        date_to: Day::parse(BUSY_DAY),
        max: Some(PageSize::clamped(MAX_PAGE)),
        ..RsSearch::default()
    };
    let mut got = Vec::new();
    loop {
        let page = client.search(&search).await.unwrap();
        assert_eq!(page.total, Some(want.len() as u64));
        let n = page.entries.len() as u32;
        got.extend(page.entries.into_iter().map(|e| e.ecli));
        if n < MAX_PAGE {
            break;
        }
        search.from += n;
    }
    assert!(want.len() > MAX_PAGE as usize);
    got.sort_unstable();
    assert_eq!(got, want, "every ruling once, across the 1000 boundary");
}

#[tokio::test]
async fn failures_that_look_like_success_are_errors() {
    let (fake, client) = fake().await;
    // A redirect to the notice page, for an ECLI that is not published.
    let missing = client
        .ruling(&Ecli::parse("ECLI:NL:HR:2099:1").unwrap(), false)
        .await
        .unwrap_err();
    assert!(
        matches!(&missing, PlatformError::NotFound { what, .. } if what.contains("mededeling")),
        "{missing:?}"
    );
    // A 200 that is not XML (an impossible date, sent past BesluitBron's own check).
    let url = http::with_query(
        http::join(PLATFORM, client.base(), "uitspraken/zoeken").unwrap(),
        [("date", "2026-02-30")],
    );
    let plain = client.feed(url).await.unwrap_err();
    assert!(
        matches!(&plain, PlatformError::Garbage { detail, .. } if detail.contains("not XML")),
        "{plain:?}"
    );
    // An HTML page with status 200.
    fake.set_garbage(true);
    let page = client.courts().await.unwrap_err();
    assert!(
        matches!(&page, PlatformError::Garbage { detail, .. } if detail.contains("HTML page")),
        "{page:?}"
    );
    fake.set_garbage(false);
    // A 400 for a malformed parameter.
    let url = http::with_query(
        http::join(PLATFORM, client.base(), "uitspraken/zoeken").unwrap(),
        [("sort", "sideways")],
    );
    assert!(matches!(client.feed(url).await, Err(PlatformError::BadRequest { .. })));
}

#[tokio::test]
async fn rulings_value_lists_and_metadata_only() {
    let (_fake, client) = fake().await;
    let ruling = client
        .ruling(&Ecli::parse(FOOTNOTES_ECLI).unwrap(), false)
        .await
        .unwrap();
    assert_eq!(ruling.court.as_ref().unwrap().name, "Hoge Raad");
    assert_eq!(ruling.kind.as_deref(), Some("Uitspraak"));
    assert_eq!(ruling.relations.len(), 2);
    assert_eq!(ruling.relations[0].kind.as_deref(), Some("conclusie"));
    assert!(ruling.vindplaatsen.contains(&"NJ 2026/201".to_owned()));
    let text = ruling.text.unwrap();
    assert!(
        text.text.contains("[^1]") && text.text.contains("| Post | Bedrag |"),
        "{}",
        text.text
    );
    assert!(text.text.contains("Een element dat de lezer niet kent."));
    assert_eq!(text.images, 1);
    let bare = client
        .ruling(&Ecli::parse(METADATA_ONLY_ECLI).unwrap(), false)
        .await
        .unwrap();
    assert!(bare.text.is_none() && bare.summary.is_none());
    let meta = client
        .ruling(&Ecli::parse(FOOTNOTES_ECLI).unwrap(), true)
        .await
        .unwrap();
    assert!(meta.text.is_none() && !meta.areas.is_empty());
    let courts = client.courts().await.unwrap();
    assert_eq!(courts.len(), rechtspraak_corpus().courts.len());
    assert!(courts.iter().any(|c| c.identifier == "http://psi.rechtspraak.nl/AG DH"));
    assert!(courts.iter().all(|c| c.identifier.trim() == c.identifier));
    let areas = client.areas().await.unwrap();
    assert!(areas.iter().any(|a| a.parent.is_some()));
    assert_eq!(
        client.procedures().await.unwrap().len(),
        rechtspraak_corpus().procedures.len()
    );
}

/// Whatever bytes arrive, every parser answers a value or an error and never panics; XML
/// built from arbitrary fragments of the real vocabulary is read the same way.
#[test]
fn qc_parsers_never_panic_whatever_the_platform_sends() {
    const PIECES: [&str; 16] = [
        "<open-rechtspraak>",
        "</open-rechtspraak>",
        "<feed xmlns=\"http://www.w3.org/2005/Atom\">",
        "</feed>",
        "<entry><id>ECLI:NL:HR:2026:1</id><title>x, y, 01-01-2026</title></entry>",
        "<uitspraak><para>",
        "</para></uitspraak>",
        "<footnote label=\"1\">",
        "</footnote>",
        "<table><row><entry>a</entry></row></table>",
        "&amp;&#233;&bogus;",
        "<rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\"><rdf:Description>",
        "</rdf:Description></rdf:RDF>",
        "<Instanties><Instantie><Naam>a</Naam><Identifier> b </Identifier></Instantie></Instanties>",
        "<![CDATA[x]]>",
        "<nr>1</nr>",
    ];
    fn prop(bytes: Vec<u8>, picks: Vec<u8>) -> bool {
        let built: String = picks.iter().map(|&i| PIECES[usize::from(i) % PIECES.len()]).collect();
        for input in [&bytes[..], built.as_bytes()] {
            let _ = parse_feed(input);
            let _ = parse_ruling(input);
            let _ = parse_courts(input);
            let _ = parse_areas(input);
            let _ = parse_procedures(input);
            if let Ok(tree) = xml::parse(input) {
                let _ = render_body(&tree);
            }
        }
        true
    }
    QuickCheck::new()
        .tests(500)
        .quickcheck(prop as fn(Vec<u8>, Vec<u8>) -> bool);
}

/// Regression: the Atom reader accepted a document type declaring entities and put an
/// undeclared entity reference into a title as text (`&xxe;XXEMARK`), then kept it.
#[test]
fn regression_issue_41_an_atom_feed_with_declared_or_undeclared_entities_is_refused() {
    let feed = |prolog: &str, title: &str| {
        format!(
            "<?xml version=\"1.0\"?>{prolog}<feed xmlns=\"http://www.w3.org/2005/Atom\"><subtitle>Aantal gevonden \
             ECLI's: 1</subtitle><entry><id>ECLI:NL:RVS:2015:3394</id><title>{title}</title><summary>-</summary>\
             <updated>2015-10-28T00:00:00Z</updated></entry></feed>"
        )
    };
    let plain = feed("", "ECLI:NL:RVS:2015:3394, Raad van State, 28-10-2015, 201501234/1/A3");
    assert!(crate::platforms::rechtspraak::parse_feed(plain.as_bytes()).is_ok());
    for bad in [
        feed(
            "<!DOCTYPE feed [<!ENTITY xxe SYSTEM \"file:///etc/passwd\">]>",
            "&xxe;XXEMARK",
        ),
        feed("", "&xxe;XXEMARK"),
        feed("<!DOCTYPE feed [<!ENTITY a \"b\">]>", "titel"),
    ] {
        let e = crate::platforms::rechtspraak::parse_feed(bad.as_bytes()).unwrap_err();
        assert!(e.contains("entit"), "{e}");
    }
}
