//! How the Tweede Kamer client reads the platform's pages: a search by words and dates
//! ([`TkSearch`]) with BesluitBron's own continuation of it ([`Continuation`]), one page
//! with its checked next-page link, the first record a filter selects, and a reference
//! list followed to its end.
//!
//! Invariants: a search's next page is asked from the typed search and a position taken
//! strictly from the platform's `@odata.nextLink`, never from a link or text an
//! assistant hands back; a next-page link is followed only on the base URL at the entity
//! set's path; a reference list is followed over at most [`MAX_REFERENCE_PAGES`] pages.
//! What it does not do: know what a page holds (`documents.rs`, `cases.rs`,
//! `meetings.rs`).

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use reqwest::Url;
use serde::{Deserialize, Serialize};

use super::super::http::{self, Asked, PlatformError};
use super::wire::{Commissie, Document, Fractie, ODataPage, Zaak};
use super::{EntitySet, MAX_REFERENCE_PAGES, MAX_WORDS, PLATFORM, Searchable, TkClient, TkError, quote_literal};

/// The longest continuation token accepted (those BesluitBron issues for the longest
/// searches the tool allows are well under half of it).
pub const MAX_CONTINUATION_CHARS: usize = 2000;
/// The largest `$skip` a continuation may carry.
pub const MAX_SKIP: u64 = 10_000_000;
/// The largest `offset` a search takes: the last record of the page at [`MAX_SKIP`].
pub const MAX_OFFSET: u64 = MAX_SKIP + PAGE_ROWS as u64 - 1;
/// The longest word, `soort` or `$skiptoken` a continuation may carry.
const MAX_TOKEN_FIELD_CHARS: usize = 500;

/// A search for documents or cases.
#[derive(Clone, Debug, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TkSearch {
    /// Every word must occur in the title or in the subject (case as the platform compares).
    pub words: Vec<String>,
    /// Only this kind (`Soort`), e.g. `Motie`.
    pub soort: Option<String>,
    /// First day, `YYYY-MM-DD` (on `Datum` for documents, `GestartOp` for cases).
    pub date_from: Option<String>,
    /// Last day, inclusive, `YYYY-MM-DD`.
    pub date_to: Option<String>,
    /// Also return records the platform marks deleted.
    pub include_deleted: bool,
    /// Ask for the total number of matches (`$count=true`).
    pub count: bool,
}

impl TkSearch {
    /// A search for records containing all `words`.
    pub fn words<I: IntoIterator<Item = S>, S: Into<String>>(words: I) -> TkSearch {
        TkSearch {
            words: words.into_iter().map(Into::into).collect(),
            ..TkSearch::default()
        }
    }

    /// The `$filter` for this search, with `date_field` for the date range; `None` when
    /// nothing is filtered.
    pub fn filter(&self, date_field: &str) -> Result<Option<String>, TkError> {
        let bad = |code: &str, message: String| PlatformError::BadRequest {
            sent: false,
            platform: PLATFORM,
            code: code.to_owned(),
            message,
        };
        let words: Vec<&str> = self.words.iter().map(|w| w.trim()).filter(|w| !w.is_empty()).collect();
        if words.len() > MAX_WORDS {
            return Err(bad(
                "too_many_words",
                format!("{} words; use at most {MAX_WORDS}", words.len()),
            ));
        }
        let mut clauses: Vec<String> = words
            .iter()
            .map(|w| {
                let lit = quote_literal(w);
                format!("(contains(Titel,{lit}) or contains(Onderwerp,{lit}))")
            })
            .collect();
        if let Some(soort) = self.soort.as_deref().map(str::trim).filter(|s| !s.is_empty()) {
            clauses.push(format!("Soort eq {}", quote_literal(soort)));
        }
        for (date, op) in [(&self.date_from, "ge"), (&self.date_to, "le")] {
            if let Some(date) = date {
                if !crate::calendar::is_day(date) {
                    return Err(bad(
                        "invalid_date",
                        format!("`{date}` is not a date written YYYY-MM-DD"),
                    ));
                }
                clauses.push(format!("{date_field} {op} {date}"));
            }
        }
        if !self.include_deleted {
            clauses.push("Verwijderd eq false".to_owned());
        }
        Ok((!clauses.is_empty()).then(|| clauses.join(" and ")))
    }
}

/// Where the next page of a search is, as BesluitBron issues it: the entity set, the
/// typed search and the position the platform's `@odata.nextLink` named (its `$skip`
/// or `$skiptoken`, nothing else of the link). Handed to an assistant as an opaque token
/// (`tk1.` and the base64url of compact JSON) and read back by [`Continuation::parse`],
/// which accepts exactly the tokens BesluitBron issues: the next page is asked with the
/// search rebuilt from its typed parameters, so the token can never carry an OData
/// option of its own.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Continuation {
    token: String,
    page: PageToken,
}

/// What a continuation holds.
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct PageToken {
    /// `Document` or `Zaak`.
    set: String,
    search: TkSearch,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    skip: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    skiptoken: Option<String>,
    /// The first record of the platform's page an answer shows (BesluitBron shows a
    /// window of the page the platform sent; the page itself is asked once).
    #[serde(default, skip_serializing_if = "is_zero")]
    from: u32,
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

/// The most records the platform sends in one page (and so the largest `from`, less one).
pub const PAGE_ROWS: u32 = 250;

/// The token prefix (a new format gets a new one, and old tokens are refused).
const TOKEN_PREFIX: &str = "tk1.";

impl Continuation {
    /// The token for `page`; a position that cannot be written is an error, never an
    /// empty token.
    fn new(page: PageToken) -> Result<Continuation, TkError> {
        let json = serde_json::to_vec(&page).map_err(|e| PlatformError::Garbage {
            platform: PLATFORM,
            detail: format!("the next page's position could not be written as a continuation ({e})"),
        })?;
        Ok(Continuation {
            token: format!("{TOKEN_PREFIX}{}", URL_SAFE_NO_PAD.encode(json)),
            page,
        })
    }

    /// Reads a token handed back by an assistant: only a token exactly as BesluitBron
    /// issues it (its prefix, canonical encoding and JSON; an entity set this client
    /// searches; a search the tool would accept; one position within bounds) is a
    /// continuation. Anything else — a URL, an OData query, a token altered by hand — is
    /// [`PlatformError::ForeignLink`], and nothing is sent.
    pub fn parse(token: &str) -> Result<Continuation, TkError> {
        let refuse = |detail: &str| PlatformError::ForeignLink {
            platform: PLATFORM,
            detail: format!("{detail}; pass the `continuation` of a previous answer exactly as given"),
        };
        if token.len() > MAX_CONTINUATION_CHARS {
            return Err(refuse("the continuation is too long"));
        }
        let Some(encoded) = token.strip_prefix(TOKEN_PREFIX) else {
            return Err(refuse("this is not a continuation BesluitBron issued"));
        };
        let json = URL_SAFE_NO_PAD
            .decode(encoded)
            .map_err(|_| refuse("the continuation is damaged"))?;
        let page: PageToken = serde_json::from_slice(&json).map_err(|_| refuse("the continuation is damaged"))?;
        let date_field = match page.set.as_str() {
            s if s == Document::SET => Document::DATE_FIELD,
            s if s == Zaak::SET => Zaak::DATE_FIELD,
            _ => return Err(refuse("the continuation names no entity set BesluitBron searches")),
        };
        let long = |text: &str| text.chars().count() > MAX_TOKEN_FIELD_CHARS;
        let search = &page.search;
        if search.words.is_empty()
            || search.words.iter().any(|w| w.trim().is_empty() || long(w))
            || search.soort.as_deref().is_some_and(long)
            || search.filter(date_field).is_err()
        {
            return Err(refuse("the continuation holds a search BesluitBron does not make"));
        }
        let position_ok = page.from < PAGE_ROWS
            && match (&page.skip, &page.skiptoken) {
                (Some(skip), None) => *skip > 0 && *skip <= MAX_SKIP,
                (None, Some(token)) => is_skiptoken(token),
                // Further into the first page.
                (None, None) => page.from > 0,
                _ => false,
            };
        if !position_ok {
            return Err(refuse("the continuation names no page BesluitBron issued"));
        }
        let continuation =
            Continuation::new(page).map_err(|_| refuse("this is not a continuation BesluitBron issued"))?;
        if continuation.token != token {
            return Err(refuse("this is not a continuation BesluitBron issued"));
        }
        Ok(continuation)
    }

    /// The token's text, as handed to an assistant.
    pub fn as_str(&self) -> &str {
        &self.token
    }

    /// The entity set it pages: `Document` or `Zaak`.
    pub fn entity_set(&self) -> &str {
        &self.page.set
    }

    /// The search it continues.
    pub fn search(&self) -> &TkSearch {
        &self.page.search
    }

    /// The first record of the platform's page to show.
    pub fn from(&self) -> u32 {
        self.page.from
    }

    /// True when it points into the search's first page (no position at the platform).
    pub fn is_first_page(&self) -> bool {
        self.page.skip.is_none() && self.page.skiptoken.is_none()
    }

    /// The platform page it names, as a token without `from`: the same for every window
    /// of one page, so the page is asked once and kept once.
    pub fn page_token(&self) -> Result<String, TkError> {
        Continuation::new(PageToken {
            from: 0,
            ..self.page.clone()
        })
        .map(|c| c.token)
    }

    /// The same platform page, shown from record `from`.
    pub fn within(&self, from: u32) -> Result<Continuation, TkError> {
        Continuation::new(PageToken {
            from,
            ..self.page.clone()
        })
    }

    /// The platform page of `search` in `set` (`Document` or `Zaak`) that holds record
    /// `offset` of the search (from 0), shown from that record: the first page below
    /// [`PAGE_ROWS`], else the page at `$skip` (a multiple of [`PAGE_ROWS`]; the
    /// platform's `$skip` paging, PLATFORMS.md §3). An offset past [`MAX_OFFSET`] is read
    /// as that one: the tool refuses it first.
    pub fn at_offset(set: &str, search: &TkSearch, offset: u64) -> Result<Continuation, TkError> {
        let rows = u64::from(PAGE_ROWS);
        let skip = offset.min(MAX_OFFSET) / rows * rows;
        Continuation::new(PageToken {
            set: set.to_owned(),
            search: search.clone(),
            skip: (skip > 0).then_some(skip),
            skiptoken: None,
            from: (offset % rows) as u32,
        })
    }

    /// The search's position of the page's first record, when the page is named by
    /// `$skip` (0 for the first page; `None` for a `$skiptoken` page).
    pub fn base(&self) -> Option<u64> {
        match (&self.page.skip, &self.page.skiptoken) {
            (Some(skip), _) => Some(*skip),
            (None, None) => Some(0),
            (None, Some(_)) => None,
        }
    }

    /// The first page of `search` in `set` (`Document` or `Zaak`), shown from record
    /// `from` (more than 0).
    pub fn first_page(set: &str, search: &TkSearch, from: u32) -> Result<Continuation, TkError> {
        Continuation::new(PageToken {
            set: set.to_owned(),
            search: search.clone(),
            skip: None,
            skiptoken: None,
            from,
        })
    }
}

/// True for a `$skiptoken` BesluitBron carries: 1 to 500 printable ASCII characters
/// without spaces (it is put into the query encoded, so nothing in it can add an option).
fn is_skiptoken(token: &str) -> bool {
    !token.is_empty() && token.len() <= MAX_TOKEN_FIELD_CHARS && token.bytes().all(|b| b.is_ascii_graphic())
}

/// One page of records.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TkPage<T> {
    /// The records (at most 250).
    pub items: Vec<T>,
    /// Total matches, when asked for with [`TkSearch::count`].
    pub count: Option<u64>,
    /// The next page, if any.
    pub next: Option<Continuation>,
}

impl TkClient {
    /// All current factions (not deleted), following every page (bounded).
    pub async fn factions(&self) -> Result<Vec<Fractie>, TkError> {
        self.reference_list().await
    }

    /// All current committees (not deleted), following every page (bounded).
    pub async fn committees(&self) -> Result<Vec<Commissie>, TkError> {
        self.reference_list().await
    }

    pub(super) async fn search<T: Searchable>(&self, search: &TkSearch) -> Result<TkPage<T>, TkError> {
        let url = self.search_url::<T>(search, None)?;
        self.search_page(search, url).await
    }

    pub(super) async fn next<T: Searchable>(&self, next: &Continuation) -> Result<TkPage<T>, TkError> {
        if next.entity_set() != T::SET {
            return Err(PlatformError::ForeignLink {
                platform: PLATFORM,
                detail: "the continuation belongs to a search of another kind".to_owned(),
            });
        }
        let url = self.search_url::<T>(&next.page.search, Some(&next.page))?;
        self.search_page(&next.page.search, url).await
    }

    /// The request of a search, at the position of `at` (or the first page): built only
    /// from the typed search and the position.
    fn search_url<T: Searchable>(&self, search: &TkSearch, at: Option<&PageToken>) -> Result<Url, TkError> {
        let filter = search.filter(T::DATE_FIELD)?;
        let mut url = http::join(PLATFORM, &self.base, T::SET)?;
        {
            let mut q = url.query_pairs_mut();
            if let Some(filter) = &filter {
                q.append_pair("$filter", filter);
            }
            q.append_pair("$orderby", &format!("{} desc", T::DATE_FIELD));
            if search.count {
                q.append_pair("$count", "true");
            }
            if let Some(skip) = at.and_then(|p| p.skip) {
                q.append_pair("$skip", &skip.to_string());
            }
            if let Some(token) = at.and_then(|p| p.skiptoken.as_deref()) {
                q.append_pair("$skiptoken", token);
            }
        }
        Ok(url)
    }

    /// One page of a search, its nextLink turned into a [`Continuation`] of `search`.
    async fn search_page<T: Searchable>(&self, search: &TkSearch, url: Url) -> Result<TkPage<T>, TkError> {
        let (page, next_link) = self.page_with_link::<T>(url).await?;
        let next = match next_link {
            None => None,
            Some(link) => Some(Continuation::new(self.position::<T>(search, &link)?)?),
        };
        Ok(TkPage { next, ..page })
    }

    /// The position a nextLink names, strictly: exactly one `$skip` (a number within
    /// [`MAX_SKIP`]) or one `$skiptoken`; whatever else the link carries is not used.
    fn position<T: Searchable>(&self, search: &TkSearch, link: &Url) -> Result<PageToken, TkError> {
        let garbage = |detail: &str| PlatformError::Garbage {
            platform: PLATFORM,
            detail: detail.to_owned(),
        };
        let mut skip = None;
        let mut skiptoken = None;
        for (name, value) in link.query_pairs() {
            match name.as_ref() {
                "$skip" if skip.is_none() => {
                    let n = value
                        .parse::<u64>()
                        .ok()
                        .filter(|&n| n > 0 && n <= MAX_SKIP)
                        .ok_or_else(|| garbage("the next-page link carries an unusable $skip"))?;
                    skip = Some(n);
                }
                "$skiptoken" if skiptoken.is_none() && is_skiptoken(&value) => skiptoken = Some(value.into_owned()),
                "$skip" | "$skiptoken" => return Err(garbage("the next-page link carries an unusable position")),
                _ => {}
            }
        }
        if skip.is_some() == skiptoken.is_some() {
            return Err(garbage(
                "the next-page link carries neither one $skip nor one $skiptoken",
            ));
        }
        Ok(PageToken {
            set: T::SET.to_owned(),
            search: search.clone(),
            skip,
            skiptoken,
            from: 0,
        })
    }

    /// The first record of `T` that `filter` selects, with `expand`: one request; none is
    /// [`PlatformError::NotFound`] naming `what`.
    pub(super) async fn first_where<T: EntitySet>(
        &self,
        filter: &str,
        expand: Option<&str>,
        what: impl FnOnce() -> String,
    ) -> Result<T, TkError> {
        let mut url = http::join(PLATFORM, &self.base, T::SET)?;
        url.query_pairs_mut().append_pair("$filter", filter);
        if let Some(expand) = expand {
            url.query_pairs_mut().append_pair("$expand", expand);
        }
        let (page, _): (TkPage<T>, _) = self.page_with_link(url).await?;
        page.items.into_iter().next().ok_or_else(|| PlatformError::NotFound {
            platform: PLATFORM,
            what: what(),
        })
    }

    pub(super) async fn reference_list<T: EntitySet>(&self) -> Result<Vec<T>, TkError> {
        let mut url = http::join(PLATFORM, &self.base, T::SET)?;
        url.query_pairs_mut().append_pair("$filter", "Verwijderd eq false");
        let mut items = Vec::new();
        for _ in 0..MAX_REFERENCE_PAGES {
            // The platform's own link, checked on the base URL: a reference list is
            // never paged by anything an assistant hands back.
            let (page, next): (TkPage<T>, _) = self.page_with_link(url).await?;
            items.extend(page.items);
            match next {
                None => return Ok(items),
                Some(next) => url = next,
            }
        }
        Err(PlatformError::TooManyPages {
            platform: PLATFORM,
            pages: MAX_REFERENCE_PAGES,
        })
    }

    /// Fetches one page; its nextLink, when it sent one, checked on the base URL at the
    /// entity set's path.
    pub(super) async fn page_with_link<T: EntitySet>(&self, url: Url) -> Result<(TkPage<T>, Option<Url>), TkError> {
        let fetched = self.http.get(url).await?;
        let page: ODataPage<T> = self.decode(&fetched, Asked::Listing)?;
        let next = match page.next_link {
            None => None,
            Some(link) => Some(self.check_link(T::SET, &link)?),
        };
        let page = TkPage {
            items: page.value,
            count: page.count,
            next: None,
        };
        Ok((page, next))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_and_each_word_over_title_or_subject_and_escape_quotes() {
        let search = TkSearch {
            soort: Some("Motie".into()),
            date_from: Some("2024-01-01".into()),
            date_to: Some("2024-12-31".into()),
            ..TkSearch::words(["stikstof", "'s-Hertogenbosch"])
        };
        assert_eq!(
            search.filter("Datum").unwrap().unwrap(),
            "(contains(Titel,'stikstof') or contains(Onderwerp,'stikstof')) and \
             (contains(Titel,'''s-Hertogenbosch') or contains(Onderwerp,'''s-Hertogenbosch')) and \
             Soort eq 'Motie' and Datum ge 2024-01-01 and Datum le 2024-12-31 and Verwijderd eq false"
        );
        let all = TkSearch {
            include_deleted: true,
            ..TkSearch::default()
        };
        assert_eq!(all.filter("Datum").unwrap(), None);
    }

    #[test]
    fn bad_dates_and_too_many_words_are_refused_before_sending() {
        let bad_date = TkSearch {
            date_from: Some("2024-13-01".into()),
            ..TkSearch::default()
        };
        assert!(
            matches!(bad_date.filter("Datum"), Err(PlatformError::BadRequest { code, .. }) if code == "invalid_date")
        );
        // Said as BesluitBron's own check, not as the Kamer's refusal: the fault is the caller's date.
        let said = bad_date.filter("Datum").expect_err("refused").to_string();
        assert!(
            said.contains("nothing was sent to Tweede Kamer") && !said.contains("Tweede Kamer refused"),
            "{said}"
        );
        let many = TkSearch::words((0..11).map(|i| format!("w{i}")));
        assert!(
            matches!(many.filter("Datum"), Err(PlatformError::BadRequest { code, .. }) if code == "too_many_words")
        );
    }

    #[test]
    fn a_window_into_a_page_is_a_continuation_of_the_same_page() {
        let search = TkSearch {
            count: true,
            ..TkSearch::words(["stikstof"])
        };
        let first = Continuation::first_page("Document", &search, 20).expect("a continuation");
        let read = Continuation::parse(first.as_str()).expect("issued, so accepted");
        assert!(read.is_first_page() && read.from() == 20 && read.search() == &search);
        // The first page from its start is the search itself, never a continuation; a
        // window past the platform's page is none BesluitBron issues.
        for from in [0, PAGE_ROWS] {
            let t = Continuation::first_page("Document", &search, from).expect("written");
            assert!(Continuation::parse(t.as_str()).is_err(), "from {from}");
        }
        let later = Continuation::new(PageToken {
            set: "Document".into(),
            search: search.clone(),
            skip: Some(250),
            skiptoken: None,
            from: 0,
        })
        .expect("a continuation");
        let window = later.within(40).expect("a window");
        assert_eq!(Continuation::parse(window.as_str()), Ok(window.clone()));
        assert_eq!(window.page_token().as_deref(), Ok(later.as_str()));
    }

    fn token_of(json: &str) -> String {
        format!("{TOKEN_PREFIX}{}", URL_SAFE_NO_PAD.encode(json))
    }

    #[test]
    fn a_continuation_reads_back_only_exactly_as_issued() {
        let issued = Continuation::new(PageToken {
            set: "Zaak".into(),
            search: TkSearch {
                count: true,
                ..TkSearch::words(["stikstof"])
            },
            skip: Some(250),
            skiptoken: None,
            from: 0,
        })
        .expect("a continuation");
        assert_eq!(Continuation::parse(issued.as_str()), Ok(issued.clone()));
        assert_eq!(issued.entity_set(), "Zaak");
        let json = r#"{"set":"Zaak","search":{"words":["stikstof"],"soort":null,"date_from":null,"date_to":null,"include_deleted":false,"count":true},"skip":250}"#;
        assert_eq!(token_of(json), issued.as_str(), "the canonical form");
        let refused = [
            // Not canonical: the same fields, spaced.
            token_of(&json.replace(',', ", ")),
            token_of(&json.replace("Zaak", "Persoon")),
            token_of(&json.replace("250", "0")),
            token_of(&json.replace("250", "99999999999")),
            token_of(&json.replace(r#","skip":250"#, "")),
            token_of(&json.replace(r#""skip":250"#, r#""skip":250,"skiptoken":"x""#)),
            token_of(&json.replace(r#"["stikstof"]"#, "[]")),
            token_of(&json.replace(r#""date_from":null"#, r#""date_from":"2024-13-01""#)),
            token_of(&json.replace(r#""count":true"#, r#""count":true,"filter":"true""#)),
            format!("{}=", issued.as_str()),
            issued.as_str().replacen("tk1.", "tk2.", 1),
            "x".repeat(MAX_CONTINUATION_CHARS + 1),
        ];
        for token in refused {
            assert!(
                matches!(Continuation::parse(&token), Err(PlatformError::ForeignLink { .. })),
                "{token} must be refused"
            );
        }
    }
}
