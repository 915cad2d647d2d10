//! OpenTK client (berthub.eu/tkconv; PLATFORMS.md §4 and §10.3): full-text search over
//! Tweede Kamer documents, a document's HTML rendition, an activity (committee meeting
//! or debate) as JSON, and the harvesters' last updates.
//!
//! Invariants:
//! - The search is a `multipart/form-data` POST (the platform reads no other body),
//!   marked idempotent: it is a read, so a broken connection may be retried by the path.
//!   Its form is exactly the fields `q`, `twomonths`, `soorten` ([`search_form`]).
//! - "Not found" is recognised whatever status it comes with: a 404, or a 200 whose
//!   body is `Found nothing!!`, `Could not find …`, `No such …` or empty
//!   ([`is_not_found`]); it is [`PlatformError::NotFound`], never an empty success.
//! - An id put into a path is one validated segment ([`DocumentId::parse`],
//!   [`parse_number`]): no `/`, `.` or `..` reaches a URL.
//! - A document is fetched conditionally when BesluitBron holds a copy's `ETag`; a 304
//!   is [`Fetch::NotModified`] (the caller renews its copy), never an empty document.
//! - Nothing a platform sends makes a parser panic: each parser is a `pub` function from
//!   bytes to a value or a [`PlatformError`].
//!
//! What this module does not do: extract text from the raw PDF or DOCX (it gives the
//! link; the document-text extractor does that), scrape the HTML pages
//! (`document.html`, `kamerleden.html`, …), or limit calls (none is published; the path
//! bounds concurrent searches).

mod wire;

use besluitbron_core::{Platform, PlatformId, Service, ServiceId};
use reqwest::Url;
use reqwest::header;

use super::http::{self, Fetched, HttpConfig, PlatformError, PlatformHttp, PlatformRequest, RefusalFormat};
pub use wire::{ActivityReply, LastUpdate, SearchHit, SearchReply};

/// The upstream service its connector calls, with the limit BesluitBron keeps there by
/// default: No hard limit, but its searches are expensive for the platform (PLATFORMS.md §10.3): at most three queued or out at once, the rest wait in arrival order.
pub const SERVICE: ServiceId = ServiceId::of(&Service {
    id: "opentk",
    name: "OpenTK (berthub.eu/tkconv)",
    limit: None,
    max_in_flight: Some(3),
});

/// The platform, as its connector declares it (its short id and public name).
pub const PLATFORM: PlatformId = PlatformId::of(&Platform {
    id: "opentk",
    name: "OpenTK",
});

/// Hits OpenTK returns at most for one search.
pub const MAX_HITS: usize = 280;

/// The longest query BesluitBron sends (OpenTK's own form has no bound; an FTS5 query
/// this long is a mistake, not a question).
pub const MAX_QUERY_CHARS: usize = 500;

/// OpenTK's search time budgets in milliseconds: 10 s, 2 s above 5 concurrent
/// searches, 1 s above 8 (PLATFORMS.md §10.3). A search that took close to one of them
/// may have been cut short.
pub const SEARCH_BUDGETS_MS: [f64; 3] = [1_000.0, 2_000.0, 10_000.0];

/// What a search covers (`soorten`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SearchKind {
    /// Everything searchable (documents and reports).
    #[default]
    Alles,
    /// Motions only (applied after the 280-hit cap).
    Moties,
    /// Written questions and answers (applied after the 280-hit cap).
    Vragenantwoorden,
    /// Activities only (applied before the cap).
    Activiteiten,
}

impl SearchKind {
    /// Every kind, in the order the tool describes them.
    pub const ALL: [SearchKind; 4] = [
        SearchKind::Alles,
        SearchKind::Moties,
        SearchKind::Vragenantwoorden,
        SearchKind::Activiteiten,
    ];

    /// The value of `soorten`.
    pub const fn as_str(self) -> &'static str {
        match self {
            SearchKind::Alles => "alles",
            SearchKind::Moties => "moties",
            SearchKind::Vragenantwoorden => "vragenantwoorden",
            SearchKind::Activiteiten => "activiteiten",
        }
    }

    /// The kind named `text`, if any.
    pub fn parse(text: &str) -> Option<SearchKind> {
        SearchKind::ALL.into_iter().find(|k| k.as_str() == text)
    }

    /// True when OpenTK filters on this kind after cutting the hits at 280, so a search
    /// may miss matching documents beyond the newest 280 hits of all kinds.
    pub const fn filtered_after_cap(self) -> bool {
        matches!(self, SearchKind::Moties | SearchKind::Vragenantwoorden)
    }
}

/// One search.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct OpenTkSearch {
    /// The query in OpenTK's syntax (SQLite FTS5, converted by the platform).
    pub query: String,
    /// What to search.
    pub kind: SearchKind,
    /// Only the last two months (`twomonths=true`).
    pub recent: bool,
}

/// The multipart fields of `search`, in order: `q`, `twomonths`, `soorten`. Control
/// characters in the query become spaces (a form field holds one line of text).
pub fn search_form(search: &OpenTkSearch) -> Vec<(String, String)> {
    let query: String = search
        .query
        .chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect();
    vec![
        ("q".to_owned(), query),
        ("twomonths".to_owned(), search.recent.to_string()),
        ("soorten".to_owned(), search.kind.as_str().to_owned()),
    ]
}

/// Why an answer may be incomplete, if it may be: the search took close to one of
/// OpenTK's time budgets (it stops silently when the budget runs out), it hit the
/// 280-hit cap, or its kind is filtered after that cap.
pub fn incompleteness(search: &OpenTkSearch, reply: &SearchReply) -> Option<String> {
    if let Some(ms) = reply.milliseconds
        && SEARCH_BUDGETS_MS
            .iter()
            .any(|&budget| ms >= budget * 0.9 && ms <= budget * 1.2)
    {
        return Some(format!(
            "OpenTK spent {ms:.0} ms, close to its time budget, and stops a search silently when the budget runs out"
        ));
    }
    if reply.results.len() >= MAX_HITS {
        return Some(format!("OpenTK returns at most {MAX_HITS} hits"));
    }
    if search.kind.filtered_after_cap() {
        return Some(format!(
            "OpenTK applies the kind `{}` after cutting the hits at {MAX_HITS}, so older matches can be missing",
            search.kind.as_str()
        ));
    }
    None
}

/// A document as the assistant names it.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum DocumentId {
    /// A document number, e.g. `2026D12345`, or a GUID.
    Number(String),
    /// A kamerstuk, `kst-{dossier}-{number}` (e.g. `kst-36200-12`).
    Kamerstuk(String),
}

impl DocumentId {
    /// Parses a document number (`2026D12345`), a GUID or a kamerstuk id
    /// (`kst-36200-12`, `kst-36200-VII-4`); anything else is refused.
    pub fn parse(text: &str) -> Option<DocumentId> {
        let t = text.trim();
        if let Some(rest) = t.strip_prefix("kst-") {
            let parts: Vec<&str> = rest.split('-').collect();
            let ok = parts.len() >= 2
                && parts.len() <= 4
                && parts[0].len() <= 8
                && parts[0].bytes().all(|b| b.is_ascii_digit())
                && !parts[0].is_empty()
                && parts[1..]
                    .iter()
                    .all(|p| !p.is_empty() && p.len() <= 8 && p.bytes().all(|b| b.is_ascii_alphanumeric()));
            return ok.then(|| DocumentId::Kamerstuk(t.to_owned()));
        }
        if let Some(n) = parse_number(t) {
            return Some(DocumentId::Number(n));
        }
        http::is_guid(&t.to_ascii_lowercase()).then(|| DocumentId::Number(t.to_ascii_lowercase()))
    }

    /// The id as given (normalised).
    pub fn as_str(&self) -> &str {
        match self {
            DocumentId::Number(n) | DocumentId::Kamerstuk(n) => n,
        }
    }
}

/// A Tweede Kamer number such as `2026D12345` (document) or `2026A01234` (activity):
/// four digits, one capital letter, 1 to 8 digits. Returned upper-cased.
pub fn parse_number(text: &str) -> Option<String> {
    let t = text.trim().to_ascii_uppercase();
    let b = t.as_bytes();
    let ok = b.len() >= 6
        && b.len() <= 13
        && b[..4].iter().all(u8::is_ascii_digit)
        && b[4].is_ascii_uppercase()
        && b[5..].iter().all(u8::is_ascii_digit);
    ok.then_some(t)
}

/// True when an answer means "not found", whatever its status: a 404 or 410, or a
/// 2xx whose body is empty, or plain text saying `Found nothing`, `Could not find` or
/// `No such` (OpenTK answers several of its not-founds with HTTP 200; §10.3).
pub fn is_not_found(status: u16, content_type: Option<&str>, body: &[u8]) -> bool {
    if status == 404 || status == 410 {
        return true;
    }
    if !(200..300).contains(&status) {
        return false;
    }
    let text = String::from_utf8_lossy(&body[..body.len().min(200)]);
    let text = text.trim();
    if text.is_empty() {
        return true;
    }
    let plain = content_type.is_none_or(|ct| ct.starts_with("text/plain"));
    plain
        && ["Found nothing", "Could not find", "No such"]
            .iter()
            .any(|p| text.starts_with(p))
}

/// Reads the answer of `POST /search`.
pub fn parse_search(body: &[u8]) -> Result<SearchReply, PlatformError> {
    http::parse_json(PLATFORM, body, "OpenTK's search answer")
}

/// Reads the answer of `GET /activiteit/{nummer}` (a JSON object with `meta`).
pub fn parse_activity(body: &[u8]) -> Result<ActivityReply, PlatformError> {
    let reply: ActivityReply = http::parse_json(PLATFORM, body, "OpenTK's activity")?;
    if reply.meta.is_empty() {
        return Err(garbage("the activity has no `meta` record".to_owned()));
    }
    Ok(reply)
}

/// Reads the answer of `GET /lastupdates`: each harvester's last run, by name.
pub fn parse_last_updates(body: &[u8]) -> Result<Vec<(String, LastUpdate)>, PlatformError> {
    let map: std::collections::BTreeMap<String, serde_json::Value> =
        http::parse_json(PLATFORM, body, "OpenTK's last updates")?;
    Ok(map
        .into_iter()
        .map(|(name, v)| (name, serde_json::from_value(v).unwrap_or_default()))
        .collect())
}

/// A document's HTML rendition (`/getdoc/{nummer}`) as text: its title (`<title>` or
/// the first `<h1>`) and its text.
pub fn parse_document_html(body: &[u8]) -> Result<(Option<String>, String), PlatformError> {
    let html = std::str::from_utf8(body).map_err(|_| garbage("the document is not UTF-8 HTML".to_owned()))?;
    // A rendition is a whole page; a bare fragment is an error page of some proxy
    // (an assumption: tkconv's pages carry a head; verify against the live service).
    let mut head = html.len().min(4096);
    while !html.is_char_boundary(head) {
        head -= 1;
    }
    let lower = html[..head].to_ascii_lowercase();
    if !(lower.contains("<head") || lower.contains("<title")) {
        return Err(garbage(
            "the answer is not a document rendition (an HTML page without a head)".to_owned(),
        ));
    }
    let title = element_text(html, "title")
        .or_else(|| element_text(html, "h1"))
        .filter(|t| !t.is_empty());
    let text = nanohtml2text::html2text(html);
    Ok((title, text.trim().to_owned()))
}

/// The text of the first `<tag …>…</tag>` in `html`, tags and entities resolved.
fn element_text(html: &str, tag: &str) -> Option<String> {
    let lower = html.to_ascii_lowercase();
    let open = lower.find(&format!("<{tag}"))?;
    let start = open + lower[open..].find('>')? + 1;
    let end = start + lower[start..].find(&format!("</{tag}"))?;
    let inner = nanohtml2text::html2text(&html[start..end]);
    Some(inner.split_whitespace().collect::<Vec<_>>().join(" "))
}

fn garbage(detail: String) -> PlatformError {
    PlatformError::Garbage {
        platform: PLATFORM,
        detail,
    }
}

/// A conditional fetch's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Fetch<T> {
    /// A new copy.
    Fresh(T),
    /// The copy BesluitBron holds is still current (HTTP 304).
    NotModified,
}

/// A document's HTML rendition as text, with its addresses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DocumentText {
    /// The document number the platform resolved the id to.
    pub number: String,
    /// Its title.
    pub title: Option<String>,
    /// The text of its HTML rendition.
    pub text: String,
    /// The platform's `ETag` for the rendition, if it sent one.
    pub etag: Option<String>,
    /// The HTML rendition.
    pub html_url: String,
    /// The document's page.
    pub page_url: String,
    /// The original file (PDF or DOCX).
    pub raw_url: String,
}

/// The OpenTK client.
#[derive(Debug)]
pub struct OpenTkClient {
    http: PlatformHttp,
    base: Url,
}

impl OpenTkClient {
    /// A client for `base_url` (e.g. `https://berthub.eu/tkconv`).
    pub fn new(base_url: &str, config: &HttpConfig) -> Result<OpenTkClient, PlatformError> {
        Ok(OpenTkClient {
            http: PlatformHttp::new(PLATFORM, config, "application/json")?,
            base: http::parse_base_url(PLATFORM, base_url)?,
        })
    }

    /// The base URL, without a trailing slash.
    pub fn base_url(&self) -> &str {
        self.base.as_str().trim_end_matches('/')
    }

    /// The search request for `search`: a multipart POST to `{base}/search`, idempotent.
    pub fn search_request(&self, search: &OpenTkSearch) -> Result<PlatformRequest, PlatformError> {
        let url = http::join(PLATFORM, &self.base, "search")?;
        Ok(PlatformRequest::post_multipart(url, search_form(search)).idempotent())
    }

    /// Runs `search`.
    pub async fn search(&self, search: &OpenTkSearch) -> Result<SearchReply, PlatformError> {
        let fetched = self.http.send(&self.search_request(search)?).await?;
        if !fetched.status.is_success() {
            return Err(http::status_error(PLATFORM, &fetched, "search", &RefusalFormat::OPAQUE));
        }
        parse_search(&fetched.body)
    }

    /// A document's HTML rendition as text; with `etag`, asked conditionally, and
    /// [`Fetch::NotModified`] when the platform says the copy is current.
    pub async fn document(&self, id: &DocumentId, etag: Option<&str>) -> Result<Fetch<DocumentText>, PlatformError> {
        let number = match id {
            DocumentId::Number(n) => n.clone(),
            DocumentId::Kamerstuk(kst) => self.resolve_kamerstuk(kst).await?,
        };
        let segment = http::encode_segment(&number);
        let html_url = http::join(PLATFORM, &self.base, &format!("getdoc/{segment}"))?;
        let mut request = PlatformRequest::get(html_url.clone()).with_accept("text/html");
        if let Some(etag) = etag {
            request = request.if_none_match(etag);
        }
        let fetched = self.http.send(&request).await?;
        if fetched.status == reqwest::StatusCode::NOT_MODIFIED {
            return Ok(Fetch::NotModified);
        }
        let what = format!("document {number}");
        self.check_found(&fetched, &what)?;
        let (title, text) = parse_document_html(&fetched.body)?;
        let page_url = http::with_query(
            http::join(PLATFORM, &self.base, "document.html")?,
            [("nummer", &number)],
        );
        let raw_url = http::join(PLATFORM, &self.base, &format!("getraw/{segment}"))?;
        Ok(Fetch::Fresh(DocumentText {
            etag: etag_of(&fetched),
            number,
            title,
            text,
            html_url: html_url.into(),
            page_url: page_url.into(),
            raw_url: raw_url.into(),
        }))
    }

    /// A document's original file (`/getraw/{number}`, PDF or Word) as bytes, within the
    /// platform's body cap; OpenTK's 200 "Could not find …" is not-found.
    pub async fn raw_file(&self, number: &str) -> Result<Vec<u8>, PlatformError> {
        let url = http::join(
            PLATFORM,
            &self.base,
            &format!("getraw/{}", http::encode_segment(number)),
        )?;
        let fetched = self.http.send(&PlatformRequest::get(url).with_accept("*/*")).await?;
        self.check_found(&fetched, &format!("the original file of document {number}"))?;
        Ok(fetched.body.to_vec())
    }

    /// The document number a kamerstuk id leads to: `/kst-…` redirects to
    /// `document.html?nummer=…` on the platform itself.
    async fn resolve_kamerstuk(&self, kst: &str) -> Result<String, PlatformError> {
        let url = http::join(PLATFORM, &self.base, &http::encode_segment(kst))?;
        let fetched = self
            .http
            .send(&PlatformRequest::get(url).with_accept("text/html"))
            .await?;
        let what = format!("kamerstuk {kst}");
        if is_not_found(fetched.status.as_u16(), fetched.content_type(), &fetched.body)
            && !fetched.status.is_redirection()
        {
            return Err(PlatformError::NotFound {
                platform: PLATFORM,
                what,
            });
        }
        // Followed (same host): the final URL names it; not followed: the Location does.
        let landed = if fetched.status.is_redirection() {
            let location = fetched
                .headers
                .get(header::LOCATION)
                .and_then(|l| l.to_str().ok())
                .and_then(|l| fetched.url.join(l).ok());
            location.ok_or_else(|| garbage(format!("the redirect for {kst} names no place")))?
        } else {
            fetched.url.clone()
        };
        landed
            .query_pairs()
            .find(|(k, _)| k == "nummer")
            .and_then(|(_, v)| parse_number(&v))
            .ok_or(PlatformError::NotFound {
                platform: PLATFORM,
                what,
            })
    }

    /// An activity (committee meeting, debate) by its number.
    pub async fn activity(&self, number: &str) -> Result<ActivityReply, PlatformError> {
        let url = http::join(
            PLATFORM,
            &self.base,
            &format!("activiteit/{}", http::encode_segment(number)),
        )?;
        let fetched = self.http.get(url).await?;
        self.check_found(&fetched, &format!("activity {number}"))?;
        parse_activity(&fetched.body)
    }

    /// When each harvester last updated OpenTK's data.
    pub async fn last_updates(&self) -> Result<Vec<(String, LastUpdate)>, PlatformError> {
        let url = http::join(PLATFORM, &self.base, "lastupdates")?;
        let fetched = self.http.get(url).await?;
        if !fetched.status.is_success() {
            return Err(http::status_error(
                PLATFORM,
                &fetched,
                "last updates",
                &RefusalFormat::OPAQUE,
            ));
        }
        parse_last_updates(&fetched.body)
    }

    /// A "not found" in any of OpenTK's shapes is [`PlatformError::NotFound`]; any other
    /// non-success is the shared status error.
    fn check_found(&self, fetched: &Fetched, what: &str) -> Result<(), PlatformError> {
        if is_not_found(fetched.status.as_u16(), fetched.content_type(), &fetched.body) {
            return Err(PlatformError::NotFound {
                platform: PLATFORM,
                what: what.to_owned(),
            });
        }
        if !fetched.status.is_success() {
            return Err(http::status_error(PLATFORM, fetched, what, &RefusalFormat::OPAQUE));
        }
        Ok(())
    }
}

/// The `ETag` of an answer, when it is readable text.
fn etag_of(fetched: &Fetched) -> Option<String> {
    let etag = fetched.headers.get(header::ETAG)?.to_str().ok()?.trim();
    (!etag.is_empty() && etag.len() <= 200).then(|| etag.to_owned())
}

#[cfg(test)]
mod tests {
    use quickcheck::quickcheck;

    use super::*;

    #[test]
    fn regression_a_rendition_with_a_character_across_the_sniffed_head_is_read() {
        // Found by the `opentk_answer` fuzz target: the head sniff cut the page at
        // byte 4096, inside a two-byte character, and panicked.
        let mut page = String::from("<html><head><title>Motie</title></head><body>");
        while page.len() < 4095 {
            page.push('a');
        }
        page.push_str("é tekst</body></html>");
        assert!(!page.is_char_boundary(4096));
        let (title, text) = parse_document_html(page.as_bytes()).unwrap();
        assert_eq!(title.as_deref(), Some("Motie"));
        assert!(text.ends_with("é tekst"), "{text:?}");
        // A fragment whose sniffed head ends inside a character is still refused.
        let fragment = format!("{}é", "b".repeat(4095));
        assert!(parse_document_html(fragment.as_bytes()).is_err());
    }

    #[test]
    fn not_found_is_recognised_in_every_shape_opentk_uses() {
        // /activiteit/{n}: 200 text/plain.
        assert!(is_not_found(200, Some("text/plain"), b"Found nothing!!"));
        // /getraw/{n}: 200 text/plain.
        assert!(is_not_found(
            200,
            Some("text/plain; charset=utf-8"),
            b"Could not find a Verslag with id 2026D99999"
        ));
        // /commissie/{id}: 200 with an empty body.
        assert!(is_not_found(200, Some("application/json"), b""));
        assert!(is_not_found(200, None, b"  \n"));
        // /getdoc: a proper 404; /kst-…: 404 "No such kst".
        assert!(is_not_found(404, Some("text/plain"), b"Found nothing!!"));
        assert!(is_not_found(404, Some("text/plain"), b"No such kst"));
        assert!(is_not_found(200, Some("text/plain"), b"No such kst"));
        // Real answers are not.
        assert!(!is_not_found(200, Some("application/json"), br#"{"meta":{}}"#));
        assert!(!is_not_found(
            200,
            Some("text/html"),
            b"<html><body>Found nothing!! is a phrase in this debate</body></html>"
        ));
        assert!(!is_not_found(500, Some("text/plain"), b"Found nothing!!"));
    }

    #[test]
    fn ids_are_one_safe_segment() {
        assert_eq!(
            DocumentId::parse(" 2026d12345 "),
            Some(DocumentId::Number("2026D12345".into()))
        );
        assert_eq!(
            DocumentId::parse("kst-36200-VII-4"),
            Some(DocumentId::Kamerstuk("kst-36200-VII-4".into()))
        );
        for bad in [
            "",
            "..",
            ".",
            "2026D",
            "2026D12345/../x",
            "kst-",
            "kst-36200",
            "kst-../x",
            "kst-1-2-3-4-5",
            "getdoc/2026D1",
            "20a6D12345",
        ] {
            assert_eq!(DocumentId::parse(bad), None, "{bad}");
        }
        assert_eq!(parse_number("2026A01234").as_deref(), Some("2026A01234"));
        assert_eq!(parse_number("2026A0123456789"), None);
    }

    #[test]
    fn incomplete_answers_are_flagged() {
        let search = OpenTkSearch {
            query: "stikstof".into(),
            ..OpenTkSearch::default()
        };
        let reply = |n: usize, ms: f64| SearchReply {
            results: vec![SearchHit::default(); n],
            milliseconds: Some(ms),
        };
        assert_eq!(incompleteness(&search, &reply(12, 140.0)), None);
        assert_eq!(incompleteness(&search, &reply(12, 1_500.0)), None);
        for near in [950.0, 1_990.0, 9_400.0, 10_200.0] {
            assert!(
                incompleteness(&search, &reply(3, near)).is_some_and(|r| r.contains("time budget")),
                "{near}"
            );
        }
        assert!(incompleteness(&search, &reply(MAX_HITS, 50.0)).is_some_and(|r| r.contains("280")));
        let motions = OpenTkSearch {
            kind: SearchKind::Moties,
            ..search.clone()
        };
        assert!(incompleteness(&motions, &reply(4, 50.0)).is_some_and(|r| r.contains("moties")));
        let activities = OpenTkSearch {
            kind: SearchKind::Activiteiten,
            ..search
        };
        assert_eq!(incompleteness(&activities, &reply(4, 50.0)), None);
    }

    #[test]
    fn parsers_take_any_bytes() {
        assert!(parse_search(b"<html>").is_err());
        assert_eq!(parse_search(br#"{"results":null}"#).unwrap().results, vec![]);
        let hit = &parse_search(br#"{"results":[{"nummer":2026,"snip":"<b>x</b>"}],"milliseconds":3}"#)
            .unwrap()
            .results[0];
        assert_eq!(hit.nummer.as_deref(), Some("2026"));
        assert!(parse_activity(b"Found nothing!!").is_err());
        assert!(parse_activity(br#"{"meta":null}"#).is_err());
        let updates = parse_last_updates(br#"{"tkgetxml":{"absolute":1,"relative":2},"odd":7}"#).unwrap();
        assert_eq!(updates.len(), 2);
        assert_eq!(updates[0], ("odd".to_owned(), LastUpdate::default()));
        assert_eq!(updates[1].1.relative, Some(2.0));
        let (title, text) =
            parse_document_html(b"<html><head><title>Motie &amp; zo</title></head><body><p>Eerste</p></body></html>")
                .unwrap();
        assert_eq!(title.as_deref(), Some("Motie & zo"));
        assert!(text.contains("Eerste"), "{text}");
        assert!(parse_document_html(b"<html><body>proxy error</body></html>").is_err());
    }

    fn qc_the_search_form_is_well_formed(query: String, kind: u8, recent: bool) -> bool {
        let search = OpenTkSearch {
            query,
            kind: SearchKind::ALL[usize::from(kind) % 4],
            recent,
        };
        let form = search_form(&search);
        let names: Vec<&str> = form.iter().map(|(n, _)| n.as_str()).collect();
        let request = OpenTkClient::new("http://127.0.0.1:9/tkconv", &HttpConfig::default())
            .and_then(|c| c.search_request(&search));
        names == ["q", "twomonths", "soorten"]
            && !form[0].1.chars().any(char::is_control)
            && form[0].1.chars().count() == search.query.chars().count()
            && ["true", "false"].contains(&form[1].1.as_str())
            && SearchKind::parse(&form[2].1) == Some(search.kind)
            && request.is_ok_and(|r| {
                r.is_idempotent()
                    && r.url().path() == "/tkconv/search"
                    && matches!(r.body(), http::RequestBody::Multipart(parts) if *parts == form)
            })
    }

    quickcheck! {
        fn qc_search_form(query: String, kind: u8, recent: bool) -> bool {
            qc_the_search_form_is_well_formed(query, kind, recent)
        }
    }
}
