//! The Basiswettenbestand client (`bwb`): national legislation searched over KOOP's SRU
//! service (`x-connection=BWB`, SRU 1.2) and read as in force on a date from its
//! toestand XML (`docs/platforms.md`, "National legislation").
//!
//! Invariants:
//! - The CQL is built here from typed, bounded arguments ([`BwbSearch::cql`]): words go
//!   into one quoted `overheidbwb.titel all "…"` clause with everything but letters,
//!   digits, spaces, `-`, `'` and `.` removed, so no text can change the query's
//!   structure; identifiers and dates are checked before they are written.
//! - An answer with diagnostics and no count is the service rejecting the query
//!   ([`PlatformError::BadRequest`] quoting it), or overload when the diagnostic is a
//!   system one or there is none; never "no results".
//! - A toestand is fetched only from the record's `locatie_toestand` on the search
//!   host or on KOOP's repository host ([`REPOSITORY_HOST`]), under `/bwb/`.
//!
//! What this module does not do: list a regulation's versions, or read its wti and
//! manifest files.

pub mod toestand;
pub mod wire;

use besluitbron_core::PlatformId;
use reqwest::Url;

use super::http::{self, Fetched, HttpConfig, PlatformError, PlatformHttp, Refusal, RefusalFormat, Retry};
pub use toestand::{Article, Toestand, ToestandError, read_toestand};
pub use wire::{BwbRecord, Diagnostic, SruResponse, parse_sru};

const PLATFORM: PlatformId = PlatformId::Bwb;

/// KOOP's repository host, where toestanden live.
pub const REPOSITORY_HOST: &str = "repository.officiele-overheidspublicaties.nl";

/// How a KOOP collection's file links are checked ([`koop_file_url`]): the folder its
/// files lie under and the words of each refusal.
pub(crate) struct FileLink {
    /// `/bwb/`, `/cvdr/`.
    pub dir: &'static str,
    pub not_a_url: &'static str,
    pub elsewhere: &'static str,
    pub not_a_file: &'static str,
}

const TOESTAND_LINK: FileLink = FileLink {
    dir: "/bwb/",
    not_a_url: "the toestand's location is not a URL",
    elsewhere: "the toestand lies on another host",
    not_a_file: "the toestand's location is not a BWB file",
};

/// A file link a KOOP record gives, accepted only on the search host (`base`) or KOOP's
/// repository host, under `link.dir` and ending `.xml`, without credentials, query or
/// fragment.
pub(crate) fn koop_file_url(
    platform: PlatformId,
    base: &Url,
    url: &str,
    link: &FileLink,
) -> Result<Url, PlatformError> {
    let refuse = |detail: &str| PlatformError::ForeignLink {
        platform,
        detail: detail.to_owned(),
    };
    let parsed = Url::parse(url).map_err(|_| refuse(link.not_a_url))?;
    let on_base = parsed.scheme() == base.scheme()
        && parsed.host_str() == base.host_str()
        && parsed.port_or_known_default() == base.port_or_known_default();
    let on_repository = parsed.scheme() == "https" && parsed.host_str() == Some(REPOSITORY_HOST);
    if !(on_base || on_repository) {
        return Err(refuse(link.elsewhere));
    }
    if !parsed.username().is_empty()
        || parsed.password().is_some()
        || parsed.query().is_some()
        || parsed.fragment().is_some()
        || !(parsed.path().contains(link.dir) && parsed.path().ends_with(".xml"))
    {
        return Err(refuse(link.not_a_file));
    }
    Ok(parsed)
}

/// KOOP's SRU 1.2 request for `query` in the collection `connection` (`x-connection`).
pub(crate) fn sru_search_url(base: &Url, connection: &str, query: &str, start_record: u64, limit: u32) -> Url {
    http::with_query(
        base.clone(),
        [
            ("operation", "searchRetrieve".to_owned()),
            ("version", "1.2".to_owned()),
            ("x-connection", connection.to_owned()),
            ("startRecord", start_record.to_string()),
            ("maximumRecords", limit.to_string()),
            ("query", query.to_owned()),
        ],
    )
}
/// Most records per page.
pub const MAX_LIMIT: u32 = 50;
/// The furthest record a search may start at (as `ob`'s SRU service).
pub const MAX_START_RECORD: u64 = 9_999;
/// Longest words text written into a query, in characters.
pub const MAX_WORDS_CHARS: usize = 200;
/// How long an overloaded service is waited out before asking once more.
const OVERLOAD_BACKOFF: std::time::Duration = std::time::Duration::from_secs(5);

/// A search of the Basiswettenbestand.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct BwbSearch {
    /// Words that must all occur in the title.
    pub words: Option<String>,
    /// The kind (`dcterms.type`): `wet`, `AMvB`, `ministeriele-regeling`, ….
    pub kind: Option<String>,
    /// The ministry (`overheid.authority`), by containment.
    pub authority: Option<String>,
    /// In force on this day, YYYY-MM-DD.
    pub in_force_on: String,
}

/// `text` as CQL-safe words: letters, digits, spaces, `-`, `'`, `.`; spaces collapsed.
pub fn clean_words(text: &str) -> String {
    let kept: String = text
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '-' | '\'' | '.') {
                c
            } else {
                ' '
            }
        })
        .collect();
    let words: Vec<&str> = kept.split_whitespace().collect();
    let mut out = words.join(" ");
    if out.chars().count() > MAX_WORDS_CHARS {
        out = out.chars().take(MAX_WORDS_CHARS).collect();
    }
    out
}

/// True for a BWB identifier: `BWBR`, `BWBV` or `BWBW` and seven digits.
pub fn is_bwb_id(text: &str) -> bool {
    let b = text.as_bytes();
    b.len() == 11
        && b.starts_with(b"BWB")
        && matches!(b[3], b'R' | b'V' | b'W')
        && b[4..].iter().all(u8::is_ascii_digit)
}

impl BwbSearch {
    /// The CQL, or why it cannot be written (nothing to search for, a bad date).
    pub fn cql(&self) -> Result<String, PlatformError> {
        let bad = |code: &str, message: String| PlatformError::BadRequest {
            platform: PLATFORM,
            code: code.to_owned(),
            message,
        };
        if !http::is_iso_date(&self.in_force_on) {
            return Err(bad(
                "invalid_date",
                format!("`{}` is not a date written YYYY-MM-DD", http::brief(&self.in_force_on)),
            ));
        }
        let mut clauses = Vec::new();
        if let Some(words) = self.words.as_deref().map(clean_words).filter(|w| !w.is_empty()) {
            clauses.push(format!("overheidbwb.titel all \"{words}\""));
        }
        if let Some(kind) = self.kind.as_deref().map(clean_words).filter(|w| !w.is_empty()) {
            clauses.push(format!("dcterms.type==\"{kind}\""));
        }
        if let Some(authority) = self.authority.as_deref().map(clean_words).filter(|w| !w.is_empty()) {
            clauses.push(format!("overheid.authority=\"{authority}\""));
        }
        if clauses.is_empty() {
            return Err(bad(
                "nothing_to_search",
                "give words of the title, a kind or a ministry".to_owned(),
            ));
        }
        clauses.push(format!("overheidbwb.geldigheidsdatum=={}", self.in_force_on));
        Ok(clauses.join(" and "))
    }
}

/// One page of a search (of the Basiswettenbestand's records by default).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SearchPage<R = BwbRecord> {
    /// Records that match in all.
    pub total: u64,
    /// This page's records.
    pub records: Vec<R>,
    /// The offset of the next page, when there is one.
    pub next_offset: Option<u64>,
}

/// Reads what an SRU answer says about a page asked from `start_record` (1-based):
/// diagnostics and no count are the service rejecting the query (quoted), or overload
/// when the diagnostic is a system one (`info:srw/diagnostic/1/1`, `/1/2`) or there is
/// none; a count with records is the page.
pub fn read_answer(answer: SruResponse, start_record: u64) -> Result<SearchPage, PlatformError> {
    read_sru_answer(
        PLATFORM,
        answer,
        start_record,
        "Use fewer or plainer words of the title, or drop a filter",
    )
}

/// [`read_answer`] for any collection of KOOP's SRU 1.2 service: `platform` is named in
/// the errors, `advice` follows a rejection's quote.
pub fn read_sru_answer<R>(
    platform: PlatformId,
    answer: SruResponse<R>,
    start_record: u64,
    advice: &str,
) -> Result<SearchPage<R>, PlatformError> {
    let busy = |signal: String| PlatformError::Overloaded {
        platform,
        signal,
        retry_after: OVERLOAD_BACKOFF,
        retry: Retry::Wait {
            after: OVERLOAD_BACKOFF,
        },
    };
    let Some(total) = answer.number_of_records else {
        let system = answer
            .diagnostics
            .iter()
            .find(|d| matches!(d.uri.trim(), "info:srw/diagnostic/1/1" | "info:srw/diagnostic/1/2"));
        if let Some(system) = system {
            return Err(busy(format!(
                "its search answered with {}",
                bounded(&system.describe())
            )));
        }
        if answer.diagnostics.is_empty() {
            return Err(busy("its search answered without a number of records".to_owned()));
        }
        let said: Vec<String> = answer.diagnostics.iter().map(|d| bounded(&d.describe())).collect();
        return Err(PlatformError::BadRequest {
            platform,
            code: "query_rejected".to_owned(),
            message: format!("the search was rejected: {}. {advice}", said.join("; ")),
        });
    };
    let before = start_record.saturating_sub(1);
    if answer.records.is_empty() && total > before {
        return Err(busy(format!(
            "a page of {total} hits came back empty at record {start_record}"
        )));
    }
    let reached = before.saturating_add(answer.records.len() as u64);
    Ok(SearchPage {
        total,
        next_offset: (reached < total).then_some(reached),
        records: answer.records,
    })
}

/// A platform message cut to a length an assistant can read.
pub(crate) fn bounded(text: &str) -> String {
    let mut out: String = text.chars().take(300).collect();
    if text.chars().count() > 300 {
        out.push('…');
    }
    out
}

/// The Basiswettenbestand client.
#[derive(Debug)]
pub struct BwbClient {
    http: PlatformHttp,
    base: Url,
}

impl BwbClient {
    /// A client for the SRU endpoint at `base_url` (e.g.
    /// `https://zoekservice.overheid.nl/sru/Search`).
    pub fn new(base_url: &str, config: &HttpConfig) -> Result<BwbClient, PlatformError> {
        Ok(BwbClient {
            http: PlatformHttp::new(PLATFORM, config, "application/xml")?,
            base: http::parse_base_url(PLATFORM, base_url)?,
        })
    }

    /// The page of `search` from `offset` (0-based), at most `limit` records.
    pub async fn search(&self, search: &BwbSearch, offset: u64, limit: u32) -> Result<SearchPage, PlatformError> {
        let query = search.cql()?;
        let start_record = offset.saturating_add(1);
        if start_record > MAX_START_RECORD {
            return Err(PlatformError::BadRequest {
                platform: PLATFORM,
                code: "too_deep".to_owned(),
                message: format!(
                    "only the first {MAX_START_RECORD} hits can be reached; narrow the search (more words, a kind \
                     or a ministry)"
                ),
            });
        }
        self.page(&query, start_record, limit.clamp(1, MAX_LIMIT)).await
    }

    /// The version of the regulation `id` in force on `date` (YYYY-MM-DD).
    pub async fn in_force(&self, id: &str, date: &str) -> Result<BwbRecord, PlatformError> {
        let bad = |code: &str, message: String| PlatformError::BadRequest {
            platform: PLATFORM,
            code: code.to_owned(),
            message,
        };
        if !is_bwb_id(id) {
            return Err(bad(
                "invalid_id",
                format!("`{}` is not a BWB id (such as BWBR0005537)", http::brief(id)),
            ));
        }
        if !http::is_iso_date(date) {
            return Err(bad(
                "invalid_date",
                format!("`{}` is not a date written YYYY-MM-DD", http::brief(date)),
            ));
        }
        let query = format!("dcterms.identifier=={id} and overheidbwb.geldigheidsdatum=={date}");
        let page = self.page(&query, 1, 10).await?;
        page.records
            .into_iter()
            .find(|r| r.identifier == id)
            .ok_or_else(|| PlatformError::NotFound {
                platform: PLATFORM,
                what: format!("version of {id} in force on {date} (it may not have been in force then)"),
            })
    }

    /// Accepts a toestand's URL only on the search host or KOOP's repository host, under
    /// a `/bwb/` path, without credentials, query or fragment.
    pub fn toestand_url(&self, url: &str) -> Result<Url, PlatformError> {
        koop_file_url(PLATFORM, &self.base, url, &TOESTAND_LINK)
    }

    /// The toestand at `url` (from a record's `locatie_toestand`), read.
    pub async fn toestand(&self, url: &str) -> Result<Toestand, PlatformError> {
        let url = self.toestand_url(url)?;
        let fetched = self.http.get(url).await?;
        if !fetched.status.is_success() {
            return Err(http::status_error(PLATFORM, &fetched, "regulation text", &REFUSALS));
        }
        read_toestand(&fetched.body).map_err(|e| PlatformError::Garbage {
            platform: PLATFORM,
            detail: e.to_string(),
        })
    }

    /// The SRU request for `query`.
    pub fn search_url(&self, query: &str, start_record: u64, limit: u32) -> Url {
        sru_search_url(&self.base, "BWB", query, start_record, limit)
    }

    async fn page(&self, query: &str, start_record: u64, limit: u32) -> Result<SearchPage, PlatformError> {
        let fetched = self.http.get(self.search_url(query, start_record, limit)).await?;
        read_answer(decode(&fetched)?, start_record)
    }
}

/// An SRU answer's body as a response, or why it is not one.
fn decode(fetched: &Fetched) -> Result<SruResponse, PlatformError> {
    if !fetched.status.is_success() {
        return Err(http::status_error(PLATFORM, fetched, "search", &REFUSALS));
    }
    if !fetched.is_xml() {
        let content_type = fetched.content_type().unwrap_or("no content type");
        return Err(PlatformError::Garbage {
            platform: PLATFORM,
            detail: format!("{content_type} body is not the expected SRU XML"),
        });
    }
    parse_sru(&fetched.body).map_err(|e| PlatformError::Garbage {
        platform: PLATFORM,
        detail: e.to_string(),
    })
}

/// The SRU service explains a refused request in diagnostics.
const REFUSALS: RefusalFormat = RefusalFormat {
    default_code: "invalid_query",
    read: read_refusal,
};

fn read_refusal(body: &[u8]) -> Option<Refusal> {
    let answer = parse_sru(body).ok()?;
    let d = answer.diagnostics.first()?;
    Some(Refusal {
        code: Some("query_rejected".to_owned()),
        message: Some(bounded(&d.describe())),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn search(words: &str) -> BwbSearch {
        BwbSearch {
            words: Some(words.to_owned()),
            in_force_on: "2025-01-01".to_owned(),
            ..BwbSearch::default()
        }
    }

    #[test]
    fn the_query_is_built_from_clean_words_and_checked_values() {
        let s = BwbSearch {
            kind: Some("wet".into()),
            authority: Some("Justitie en Veiligheid".into()),
            ..search("vuurwerk \" or dcterms.identifier=x) (")
        };
        assert_eq!(
            s.cql().unwrap(),
            "overheidbwb.titel all \"vuurwerk or dcterms.identifier x\" and dcterms.type==\"wet\" and \
             overheid.authority=\"Justitie en Veiligheid\" and overheidbwb.geldigheidsdatum==2025-01-01"
        );
        assert!(matches!(
            BwbSearch { in_force_on: "2025-02-30".into(), ..search("x") }.cql(),
            Err(PlatformError::BadRequest { code, .. }) if code == "invalid_date"
        ));
        assert!(matches!(
            search(" \" ( ").cql(),
            Err(PlatformError::BadRequest { code, .. }) if code == "nothing_to_search"
        ));
        assert!(is_bwb_id("BWBR0005537") && !is_bwb_id("BWBR000553") && !is_bwb_id("CVDR112779"));
    }

    #[test]
    fn qc_no_words_change_the_querys_structure() {
        fn prop(words: String) -> bool {
            let cql = match search(&words).cql() {
                Ok(cql) => cql,
                Err(_) => return true,
            };
            // One quoted clause, then the date: exactly two quotes, no parenthesis.
            cql.matches('"').count() == 2 && !cql.contains('(') && cql.ends_with("geldigheidsdatum==2025-01-01")
        }
        quickcheck::QuickCheck::new()
            .tests(2_000)
            .quickcheck(prop as fn(String) -> bool);
    }

    #[test]
    fn a_toestand_is_read_only_from_a_bwb_file_on_the_known_hosts() {
        let c = BwbClient::new("http://127.0.0.1:9/bwb/sru/Search", &HttpConfig::default()).unwrap();
        for ok in [
            "http://127.0.0.1:9/bwb/bwb/BWBR0005537/2024-01-01_0/xml/BWBR0005537_2024-01-01_0.xml",
            "https://repository.officiele-overheidspublicaties.nl/bwb/BWBR0005537/2024-01-01_0/xml/BWBR0005537_2024-01-01_0.xml",
        ] {
            assert!(c.toestand_url(ok).is_ok(), "{ok}");
        }
        for bad in [
            "http://example.org/bwb/x.xml",
            "http://repository.officiele-overheidspublicaties.nl/bwb/x.xml",
            "http://127.0.0.1:10/bwb/x.xml",
            "http://127.0.0.1:9/other/x.xml",
            "http://127.0.0.1:9/bwb/x.xml?a=b",
            "http://u:p@127.0.0.1:9/bwb/x.xml",
            "not a url",
        ] {
            assert!(
                matches!(c.toestand_url(bad), Err(PlatformError::ForeignLink { .. })),
                "{bad}"
            );
        }
    }

    #[test]
    fn diagnostics_without_a_count_are_a_rejection_quoting_the_service() {
        let answer = SruResponse {
            number_of_records: None,
            records: Vec::new(),
            diagnostics: vec![Diagnostic {
                uri: "info:srw/diagnostic/1/10".into(),
                details: None,
                message: Some("Query syntax error".into()),
            }],
        };
        let e = read_answer(answer.clone(), 1).unwrap_err();
        assert!(e.to_string().contains("Query syntax error"), "{e}");
        let overloaded = SruResponse {
            diagnostics: Vec::new(),
            ..answer
        };
        assert!(matches!(
            read_answer(overloaded, 1),
            Err(PlatformError::Overloaded { .. })
        ));
    }
}
