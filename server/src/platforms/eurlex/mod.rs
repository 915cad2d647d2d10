//! EU law through CELLAR, the Publications Office's semantic repository behind EUR-Lex
//! (`eurlex`; PLATFORMS.md §12b): acts found and described by SPARQL at
//! `{base}/webapi/rdf/sparql` ([`sparql`]), their text read from CELLAR's items at
//! `{base}/resource/cellar/{uuid}.{expression}.{manifestation}/DOC_n` ([`text`]). No key.
//!
//! Load (Publications Office, *Cellar* manual §1.5, PLATFORMS.md §12b.1): access is best
//! effort without a service level; a client calling repeatedly may be refused by the EU's
//! firewalls after a few hits (no number, status or wait published); the SPARQL endpoint
//! may be unstable; do not harvest. So BesluitBron keeps its own budget on one service,
//! [`SERVICE`] (20 calls a minute, two at once), bounds every query by a time-out
//! (`Platforms.eurlex.QueryTimeoutSecs`, default [`DEFAULT_QUERY_TIMEOUT_SECS`], sent to
//! the endpoint as Virtuoso's `timeout` too) and a `LIMIT`, and keeps answers in its buffer.
//!
//! Invariants:
//! - Every query is built by [`sparql`] from checked values; its rows are capped.
//! - A query that runs out of time is [`PlatformError::Timeout`] naming the time-out; an
//!   answer the endpoint says it cut (`X-SPARQL-MaxRows`) or one without
//!   `results.bindings` is an error, never a shorter or empty result.
//! - Items are fetched only under the configured base's `/resource/cellar/`, by the
//!   CELLAR ids a query gave, whatever host the query wrote in them.
//!
//! The Dutch measures a directive was transposed by: [`transposition`].
//!
//! What this module does not do: notices (tree/branch/object XML) or consolidated texts.

pub mod sparql;
pub mod text;
pub mod transposition;

use std::time::Duration;

use besluitbron_core::{LimitConfig, Platform, PlatformId, Service, ServiceId, Units};
use reqwest::Url;
use serde::{Deserialize, Serialize};

use super::http::{self, HttpConfig, PlatformError, PlatformHttp, PlatformRequest, RefusalFormat};
pub use super::koop::regulation::Regulation;
use super::koop::regulation::{Block, BlockKind, Standing};
use sparql::{Language, Row, Search, value};
pub use transposition::{Measure, Transposition};

/// The platform, as its connector declares it (its short id and public name).
pub const PLATFORM: PlatformId = PlatformId::of(&Platform {
    id: "eurlex",
    name: "EUR-Lex (CELLAR)",
});

/// CELLAR at the Publications Office: its SPARQL endpoint and its items, one host and one
/// budget. 20 calls a minute and two at once: the Publications Office publishes no
/// number, only that repeated calls may be blocked by the EU's firewalls (module doc).
pub const SERVICE: ServiceId = ServiceId::of(&Service {
    id: "cellar",
    name: "the Publications Office's CELLAR (publications.europa.eu)",
    limit: Some(LimitConfig::new(Units::whole(20), Duration::from_secs(60))),
    max_in_flight: Some(2),
});

/// CELLAR's address.
pub const BASE_URL: &str = "https://publications.europa.eu";

/// How long one SPARQL query may take by default, in seconds (title words are matched by
/// a scan, which a peer measured at over ten seconds on the real endpoint).
pub const DEFAULT_QUERY_TIMEOUT_SECS: u64 = 30;

/// What an XHTML item is asked as.
const ACCEPT_XHTML: &str = "application/xhtml+xml, text/html;q=0.9";
/// What a Formex item is asked as.
const ACCEPT_FORMEX: &str = "application/zip;mtype=fmx4, application/xml;mtype=fmx4;q=0.9, application/xml;q=0.8";

/// One act in a search's results.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hit {
    /// Its CELEX number.
    pub celex: String,
    /// Its title in the language searched.
    pub title: String,
    /// Its document date.
    pub date: Option<String>,
    /// Its resource type's code (`REG`, `DIR_IMPL`).
    pub kind: Option<String>,
    /// Whether it is in force, when CELLAR says.
    pub in_force: Option<bool>,
    /// Its ELI.
    pub eli: Option<String>,
}

/// One page of a search.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct SearchPage {
    /// The acts of the page.
    pub hits: Vec<Hit>,
    /// Where the next page starts, when there is one.
    pub next_offset: Option<u64>,
}

/// One item of an act's text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Item {
    /// `xhtml` or `fmx4`.
    pub format: String,
    /// Its CELLAR id: `{uuid}.{expression}.{manifestation}/DOC_n`.
    pub cellar: String,
}

/// What CELLAR says of one act, in one language.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Act {
    /// Its CELEX number.
    pub celex: String,
    /// The language asked.
    pub language: String,
    /// Its title in that language.
    pub title: Option<String>,
    /// Its resource type's code.
    pub kind: Option<String>,
    /// Its document date.
    pub date: Option<String>,
    /// In force, when CELLAR says.
    pub in_force: Option<bool>,
    /// Its ELI.
    pub eli: Option<String>,
    /// Days it entered into force.
    pub entry_into_force: Vec<String>,
    /// The day its validity ends (`9999-12-31`: open).
    pub end_of_validity: Option<String>,
    /// The acts it is based on (CELEX, or CELLAR's id where it gives no CELEX).
    pub legal_basis: Vec<String>,
    /// The acts that amend it (the same).
    pub amended_by: Vec<String>,
    /// Its text's items in that language: XHTML ones first, then Formex.
    pub items: Vec<Item>,
}

impl Act {
    /// The items to read: the XHTML manifestation's, else the Formex one's.
    pub fn text_items(&self) -> Vec<&Item> {
        let xhtml: Vec<&Item> = self.items.iter().filter(|i| i.format == "xhtml").collect();
        if xhtml.is_empty() {
            self.items.iter().filter(|i| i.format == "fmx4").collect()
        } else {
            xhtml
        }
    }
}

/// True for `"1"` / `"true"`, false for `"0"` / `"false"` (CELLAR writes both).
fn flag(text: &str) -> Option<bool> {
    match text.trim() {
        "1" | "true" => Some(true),
        "0" | "false" => Some(false),
        _ => None,
    }
}

/// The day of a date or dateTime literal.
fn day(text: &str) -> String {
    text.chars().take(10).collect()
}

/// The code at the end of an authority IRI.
fn code(iri: &str) -> String {
    iri.rsplit('/').next().unwrap_or(iri).to_owned()
}

/// A CELLAR item id from an item IRI (`…/resource/cellar/{id}`), checked: letters,
/// digits, `-` and `.`, then `/DOC_` and a number.
pub fn cellar_item(iri: &str) -> Option<String> {
    let (_, id) = iri.split_once("/resource/cellar/")?;
    let (manifestation, doc) = id.split_once('/')?;
    let number = doc.strip_prefix("DOC_")?;
    let ok = !manifestation.is_empty()
        && manifestation.len() <= 80
        && manifestation
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'.')
        && !number.is_empty()
        && number.len() <= 4
        && number.bytes().all(|b| b.is_ascii_digit());
    ok.then(|| id.to_owned())
}

/// The search's rows as hits, one per CELEX number (the first row of each), and whether
/// more than `limit` were found.
pub fn hits(rows: &[Row], limit: u32) -> (Vec<Hit>, bool) {
    let mut out: Vec<Hit> = Vec::new();
    for row in rows {
        let Some(celex) = value(row, "celex") else { continue };
        if out.iter().any(|h| h.celex == celex) {
            continue;
        }
        out.push(Hit {
            celex: celex.to_owned(),
            title: value(row, "title")
                .map(|t| t.split_whitespace().collect::<Vec<_>>().join(" "))
                .unwrap_or_default(),
            date: value(row, "date").map(day),
            kind: value(row, "type").map(code),
            in_force: value(row, "force").and_then(flag),
            eli: value(row, "eli").map(str::to_owned),
        });
    }
    let more = out.len() > limit as usize;
    out.truncate(limit as usize);
    (out, more)
}

/// The act query's rows as an act (`None`: CELLAR has no act with that CELEX number).
pub fn act(celex: &str, language: Language, rows: &[Row]) -> Option<Act> {
    if rows.is_empty() {
        return None;
    }
    let mut a = Act {
        celex: celex.to_owned(),
        language: language.short().to_owned(),
        ..Act::default()
    };
    let related = |row: &Row| value(row, "celex").or_else(|| value(row, "value")).map(str::to_owned);
    for row in rows {
        let rel = value(row, "rel").unwrap_or_default();
        let rel = sparql::RELATIONS
            .iter()
            .find(|(p, _)| rel == format!("{}{p}", sparql::CDM))
            .map_or(rel, |(_, name)| name);
        let v = value(row, "value").unwrap_or_default();
        match rel {
            "title" => a.title = Some(v.split_whitespace().collect::<Vec<_>>().join(" ")),
            "type" => a.kind = Some(code(v)),
            "date" => a.date = Some(day(v)),
            "in_force" => a.in_force = flag(v),
            "eli" => a.eli = Some(v.to_owned()),
            "entry_into_force" => a.entry_into_force.push(day(v)),
            "end_of_validity" => a.end_of_validity = Some(day(v)),
            "legal_basis" => a.legal_basis.extend(related(row)),
            "amended_by" => a.amended_by.extend(related(row)),
            "item" => {
                if let (Some(format), Some(cellar)) = (value(row, "format"), value(row, "item").and_then(cellar_item)) {
                    a.items.push(Item {
                        format: format.to_owned(),
                        cellar,
                    });
                }
            }
            _ => {}
        }
    }
    for list in [&mut a.entry_into_force, &mut a.legal_basis, &mut a.amended_by] {
        list.sort();
        list.dedup();
    }
    a.items
        .sort_by(|x, y| (x.format != "xhtml", &x.cellar).cmp(&(y.format != "xhtml", &y.cellar)));
    a.items.dedup();
    Some(a)
}

/// The client of CELLAR.
#[derive(Debug)]
pub struct EurlexClient {
    sparql: PlatformHttp,
    items: PlatformHttp,
    base: Url,
    query_timeout: Duration,
}

impl EurlexClient {
    /// A client for CELLAR at `base_url` (e.g. `https://publications.europa.eu`), each
    /// query bounded by `query_timeout`, each item by `config`'s request time-out.
    pub fn new(base_url: &str, config: &HttpConfig, query_timeout: Duration) -> Result<EurlexClient, PlatformError> {
        let base = http::parse_base_url(PLATFORM, base_url)?;
        let query_timeout_ms = u64::try_from(query_timeout.as_millis()).unwrap_or(u64::MAX).max(1);
        let sparql_config = HttpConfig {
            request_timeout_ms: query_timeout_ms,
            ..config.clone()
        };
        Ok(EurlexClient {
            sparql: PlatformHttp::new(PLATFORM, &sparql_config, "application/sparql-results+json")?,
            items: PlatformHttp::new(PLATFORM, config, ACCEPT_XHTML)?,
            base,
            query_timeout,
        })
    }

    /// The rows of one SELECT query, bounded by the query time-out.
    pub async fn select(&self, query: &str) -> Result<Vec<Row>, PlatformError> {
        let url = http::join(PLATFORM, &self.base, "webapi/rdf/sparql")?;
        let timeout_ms = self.query_timeout.as_millis().to_string();
        let request = PlatformRequest::post_form(url, [("query", query), ("timeout", timeout_ms.as_str())])
            .idempotent()
            .with_accept("application/sparql-results+json");
        let fetched = self.sparql.send(&request).await?;
        if !fetched.status.is_success() {
            return Err(http::status_error(
                PLATFORM,
                &fetched,
                http::Asked::Listing,
                &RefusalFormat::OPAQUE,
            ));
        }
        if let Some(rows) = http::header_u64(&fetched.headers, "x-sparql-maxrows") {
            return Err(PlatformError::Failed {
                platform: PLATFORM,
                said: format!("CELLAR cut its answer at {rows} rows (X-SPARQL-MaxRows): a partial result"),
            });
        }
        sparql::read_results(&fetched.body).map_err(|detail| PlatformError::Garbage {
            platform: PLATFORM,
            detail: format!("{detail} ({})", fetched.content_type().unwrap_or("no content type")),
        })
    }

    /// The page of `search` from `offset`, at most `limit` acts.
    pub async fn search(&self, search: &Search, offset: u64, limit: u32) -> Result<SearchPage, PlatformError> {
        let rows = self.select(&sparql::search_query(search, offset, limit)).await?;
        let (hits, more) = hits(&rows, limit);
        let next_offset = more.then_some(offset + hits.len() as u64);
        Ok(SearchPage { hits, next_offset })
    }

    /// What CELLAR says of the act `celex` (checked with [`sparql::is_celex`]) in
    /// `language`.
    pub async fn act(&self, celex: &str, language: Language) -> Result<Act, PlatformError> {
        if !sparql::is_celex(celex) {
            return Err(PlatformError::BadRequest {
                sent: false,
                platform: PLATFORM,
                code: "invalid_celex".to_owned(),
                message: format!("`{}` is not a CELEX number (such as 32016R0679)", http::brief(celex)),
            });
        }
        let rows = self.select(&sparql::act_query(celex, language)).await?;
        act(celex, language, &rows).ok_or_else(|| PlatformError::NotFound {
            platform: PLATFORM,
            what: format!("act with CELEX number {celex}"),
        })
    }

    /// The Dutch measures CELLAR lists for the act `celex` (checked with
    /// [`sparql::is_celex`]); an act CELLAR does not have is `NotFound`.
    pub async fn transposition(&self, celex: &str) -> Result<Transposition, PlatformError> {
        if !sparql::is_celex(celex) {
            return Err(PlatformError::BadRequest {
                sent: false,
                platform: PLATFORM,
                code: "invalid_celex".to_owned(),
                message: format!("`{}` is not a CELEX number (such as 32019L1937)", http::brief(celex)),
            });
        }
        let rows = self.select(&transposition::query(celex)).await?;
        transposition::read(celex, &rows).ok_or_else(|| PlatformError::NotFound {
            platform: PLATFORM,
            what: format!("act with CELEX number {celex}"),
        })
    }

    /// The text of the items (one XHTML item, or the Formex items of one manifestation),
    /// read as one act.
    pub async fn text(&self, items: &[Item]) -> Result<Regulation, PlatformError> {
        let mut files = Vec::new();
        let mut missing = Vec::new();
        for item in items {
            match self.item(item).await? {
                Some(file) => files.push(file),
                None => missing.push(item.cellar.clone()),
            }
        }
        if files.is_empty() {
            return Err(PlatformError::FileMissing {
                platform: PLATFORM,
                what: format!("the text ({})", missing.join(", ")),
            });
        }
        let mut act = Self::read_files(items, &files)?;
        if !missing.is_empty() {
            act.blocks.push(Block {
                kind: BlockKind::Passage,
                depth: 0,
                heading: String::new(),
                number: None,
                standing: Standing::InForce,
                text: format!(
                    "[BesluitBron: CELLAR lists {} more item(s) of this text ({}) but does not serve them (HTTP 404); \
                     their text is not included here.]",
                    missing.len(),
                    missing.join(", ")
                ),
            });
        }
        Ok(act)
    }

    /// One item's bytes, `None` when CELLAR does not serve it (404, 410).
    async fn item(&self, item: &Item) -> Result<Option<(String, Vec<u8>)>, PlatformError> {
        let id =
            cellar_item(&format!("/resource/cellar/{}", item.cellar)).ok_or_else(|| PlatformError::ForeignLink {
                platform: PLATFORM,
                detail: format!("`{}` is not a CELLAR item", http::brief(&item.cellar)),
            })?;
        let url = http::join(PLATFORM, &self.base, &format!("resource/cellar/{id}"))?;
        let accept = if item.format == "xhtml" {
            ACCEPT_XHTML
        } else {
            ACCEPT_FORMEX
        };
        let fetched = self.items.send(&PlatformRequest::get(url).with_accept(accept)).await?;
        if matches!(fetched.status.as_u16(), 404 | 410) {
            return Ok(None);
        }
        if !fetched.status.is_success() {
            return Err(http::status_error(
                PLATFORM,
                &fetched,
                http::Asked::Listing,
                &RefusalFormat::OPAQUE,
            ));
        }
        Ok(Some((id, fetched.body)))
    }

    /// The files read as one act.
    fn read_files(items: &[Item], files: &[(String, Vec<u8>)]) -> Result<Regulation, PlatformError> {
        let unreadable = |detail: String| PlatformError::Unreadable {
            platform: PLATFORM,
            document: items.first().map(|i| format!("item {}", i.cellar)).unwrap_or_default(),
            detail,
        };
        let plain_formex = items.iter().all(|i| i.format == "fmx4") && !files.iter().any(|(_, b)| b.starts_with(b"PK"));
        if plain_formex && files.len() > 1 {
            return text::read_formex_files(files).map_err(|e| unreadable(e.to_string()));
        }
        let mut act: Option<Regulation> = None;
        for (_, bytes) in files {
            let part = text::read_item(bytes).map_err(|e| unreadable(e.to_string()))?;
            match &mut act {
                None => act = Some(part),
                Some(a) => a.blocks.extend(part.blocks),
            }
        }
        act.ok_or_else(|| unreadable("no item to read".to_owned()))
    }
}
