//! What the Officiële Bekendmakingen tools keep and show: typed answers and pure render
//! functions, snapshot-tested below (`snapshots/render/ob_*.snap`).
//!
//! Invariants: an empty result says what was searched and how to widen it; a warning
//! from the platform is shown next to the results it came with; a publication without
//! a text rendition says so and gives the PDF link, never an empty text.

use std::fmt::Write as _;

use besluitbron_core::path::Served;
use rmcp::schemars::{self, JsonSchema};
use serde::{Deserialize, Serialize};
use serde_json::json;

use crate::call::Structure;
use crate::call::{Head, Rendered, provenance};
use crate::connectors::vocabulary::{Item, Listing, Tally};
use crate::platforms::ob::{Chamber, MAX_START_RECORD, ObRecord, SearchPage};

/// One publication as a search hit (and as the metadata of `ob_document`).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Hit {
    /// The identifier, for `ob_document`.
    pub identifier: String,
    /// The title.
    pub title: String,
    /// The journal (`Gemeenteblad`, `Staatscourant`, `Kamerstuk`, …).
    pub publication: Option<String>,
    /// Its number in the journal.
    pub number: Option<String>,
    /// The organisations that made it.
    pub organizations: Vec<String>,
    /// The organisations' type.
    pub organization_type: Option<String>,
    /// The kind of document.
    pub document_type: Option<String>,
    /// The parliamentary dossier, for Kamerstukken.
    pub dossier: Option<String>,
    /// The chamber of a parliamentary item (`tweede-kamer`, `eerste-kamer`,
    /// `verenigde-vergadering`), where its record says.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chamber: Option<String>,
    /// The publication date.
    pub published: Option<String>,
    /// The document's own date (dagtekening).
    pub document_date: Option<String>,
    /// Subjects.
    pub subjects: Vec<String>,
    /// The page for people at the platform.
    pub url: Option<String>,
    /// The PDF.
    pub pdf_url: Option<String>,
    /// The renditions that exist (`xml`, `html`, `pdf`, …).
    pub renditions: Vec<String>,
}

impl From<&ObRecord> for Hit {
    fn from(r: &ObRecord) -> Hit {
        let mut renditions: Vec<String> = r.manifestations.iter().map(|m| m.kind.clone()).collect();
        renditions.sort();
        renditions.dedup();
        Hit {
            identifier: r.identifier.clone(),
            title: r.title.clone(),
            publication: r.publication.clone(),
            number: r.number.clone(),
            organizations: r.creators.clone(),
            organization_type: r.organization_type.clone(),
            document_type: r.document_type.clone(),
            dossier: r.dossier.clone(),
            chamber: Chamber::of(&r.identifier, &r.creators).map(|c| c.as_str().to_owned()),
            published: r.available.clone(),
            document_date: r.date.clone(),
            subjects: r.subjects.clone(),
            url: r.preferred_url.clone(),
            pdf_url: r.pdf_url.clone().or_else(|| r.rendition("pdf").map(str::to_owned)),
            renditions,
        }
    }
}

impl Hit {
    fn line(&self) -> String {
        let mut line = format!("- {}", self.identifier);
        if let Some(p) = &self.publication {
            let _ = write!(
                line,
                " ({p}{})",
                self.number.as_deref().map(|n| format!(" {n}")).unwrap_or_default()
            );
        }
        let _ = write!(line, ": {}", self.title);
        if !self.organizations.is_empty() {
            let _ = write!(line, " — {}", self.organizations.join(", "));
        }
        // The chamber, unless an organisation already names it.
        if let Some(c) = Chamber::ALL
            .into_iter()
            .find(|c| self.chamber.as_deref() == Some(c.as_str()))
            .filter(|c| !self.organizations.iter().any(|o| o == c.creator()))
        {
            let _ = write!(line, " — {}", c.creator());
        }
        if let Some(d) = &self.published {
            let _ = write!(line, "; published {d}");
        }
        if let Some(d) = self
            .document_date
            .as_ref()
            .filter(|d| Some(*d) != self.published.as_ref())
        {
            let _ = write!(line, ", dated {d}");
        }
        let text = if self.renditions.iter().any(|r| r == "xml") {
            "text"
        } else if self.renditions.iter().any(|r| r == "pdf") {
            "PDF only"
        } else {
            "no text rendition"
        };
        let _ = write!(line, " [{text}]");
        line
    }
}

/// One publication as `ob_search` and `ob_document` show it: the shared [`Item`] (`date`:
/// published; `kind`: the document type, else the journal; `organization`: the first
/// maker) and what the journal adds.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct Publication {
    /// The publication (`id` for `ob_document`).
    #[serde(flatten)]
    pub item: Item,
    /// The journal (`Gemeenteblad`, `Staatscourant`, `Kamerstuk`, …) and its number there.
    pub journal: Option<String>,
    /// Its number in the journal.
    pub journal_number: Option<String>,
    /// Every organisation that made it.
    pub organizations: Vec<String>,
    /// The organisations' type.
    pub organization_type: Option<String>,
    /// The parliamentary dossier, for Kamerstukken.
    pub dossier: Option<String>,
    /// The chamber of a parliamentary item: `tweede-kamer`, `eerste-kamer` or
    /// `verenigde-vergadering` (absent when the record does not say).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub chamber: Option<String>,
    /// The document's own date (dagtekening).
    pub document_date: Option<String>,
    /// Subjects.
    pub subjects: Vec<String>,
    /// The PDF.
    pub pdf_url: Option<String>,
    /// The renditions that exist (`xml`, `html`, `pdf`, …).
    pub renditions: Vec<String>,
}

impl Publication {
    /// A hit of a search as the publication it shows.
    pub fn of(h: &Hit) -> Publication {
        Publication {
            item: Item::new(
                crate::platforms::ob::PLATFORM,
                "ob_document",
                h.identifier.clone(),
                h.title.clone(),
            )
            .dated(h.published.clone())
            .kind(h.document_type.clone().or_else(|| h.publication.clone()))
            .of(h.organizations.first().cloned())
            .at(h.url.clone()),
            journal: h.publication.clone(),
            journal_number: h.number.clone(),
            organizations: h.organizations.clone(),
            organization_type: h.organization_type.clone(),
            dossier: h.dossier.clone(),
            chamber: h.chamber.clone(),
            document_date: h.document_date.clone(),
            subjects: h.subjects.clone(),
            pdf_url: h.pdf_url.clone(),
            renditions: h.renditions.clone(),
        }
    }
}

/// `ob_search`'s structured content.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SearchShown {
    /// What was searched, in words.
    pub searched: String,
    /// The publications of this page.
    pub results: Vec<Publication>,
    /// All hits of the search (exact), and the next reachable page.
    #[serde(flatten)]
    pub tally: Tally,
    /// What the platform ignored, from its diagnostics.
    pub warnings: Vec<String>,
}

/// What `ob_search` keeps: one page.
///
/// Only what the platform said: the key it is kept under is the canonical search, which
/// differently written questions share, so what was asked (its words, its filter
/// arguments) is each asker's own ([`Asked`]), never kept here. An answer kept by an
/// older BesluitBron still reads: its `searched` and `filters` are left unread.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
pub struct SearchAnswer {
    /// All hits of the search.
    pub total: u64,
    /// The offset of this page.
    pub offset: u64,
    /// The hits of this page.
    pub hits: Vec<Hit>,
    /// The offset of the next page, while hits remain (and are reachable).
    pub next_offset: Option<u64>,
    /// What the platform ignored, from its diagnostics.
    pub warnings: Vec<String>,
}

impl SearchAnswer {
    /// The answer for `page`, asked from `offset`.
    pub fn new(offset: u64, page: SearchPage) -> SearchAnswer {
        let reachable = |o: &u64| o.saturating_add(1) < MAX_START_RECORD;
        SearchAnswer {
            total: page.total,
            offset,
            hits: page.records.iter().map(Hit::from).collect(),
            next_offset: page.next_offset.filter(reachable),
            warnings: page.warnings,
        }
    }
}

/// What one asker of `ob_search` asked, in its own words: made from its arguments for
/// each call, never from the kept answer another asker's call may have fetched.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Asked {
    /// What was searched, in words.
    pub searched: String,
    /// The filter arguments given, by name (for the advice on an empty result).
    pub filters: Vec<String>,
}

/// How to widen a search that found nothing, naming the arguments it was given.
fn widen(filters: &[String]) -> String {
    let given = |kinds: &[&str]| -> Vec<String> {
        filters
            .iter()
            .filter(|f| kinds.contains(&f.as_str()))
            .map(|f| format!("`{f}`"))
            .collect()
    };
    let mut steps = Vec::new();
    let words = given(&["query"]);
    if !words.is_empty() {
        steps.push(
            "fewer or other words in `query` (all must occur; a phrase in quotes must occur as it is)".to_owned(),
        );
    }
    let dropped = given(&[
        "publication",
        "organization_type",
        "organization",
        "document_type",
        "dossier",
    ]);
    if !dropped.is_empty() {
        steps.push(format!("leave out {}", dropped.join(" or ")));
    }
    let dates = given(&["date_from", "date_to"]);
    if !dates.is_empty() {
        steps.push(format!("widen {}", dates.join(" and ")));
    }
    if filters.iter().any(|f| f == "date_field") {
        steps.push("`date_field` `published` instead of `document`".to_owned());
    }
    let steps = if steps.is_empty() {
        String::new()
    } else {
        format!("To widen: {}. ", steps.join("; "))
    };
    format!(
        "{steps}Council documents (agendas, minutes, proposals) are found with obv_search, parliamentary \
         documents also with tk_search, court rulings with rechtspraak_search."
    )
}

/// `ob_search`'s result for the question `asked`.
pub fn search(answer: &SearchAnswer, served: Served, asked: &Asked) -> Rendered {
    let mut text = if answer.hits.is_empty() && answer.total == 0 {
        format!(
            "No publications found at Officiële Bekendmakingen for {}{}. {}",
            asked.searched,
            provenance(served),
            widen(&asked.filters)
        )
    } else if answer.hits.is_empty() {
        format!(
            "No publications at offset {} of {} for {}{}; ask again with a smaller `offset` (0 for the first page).",
            answer.offset,
            answer.total,
            asked.searched,
            provenance(served)
        )
    } else {
        format!(
            "{}–{} of {} publications for {}{}.",
            answer.offset + 1,
            answer.offset + answer.hits.len() as u64,
            answer.total,
            asked.searched,
            provenance(served)
        )
    };
    for w in &answer.warnings {
        let _ = write!(
            text,
            "\nWarning: Officiële Bekendmakingen ignored part of the search ({w}); the results may be broader \
             than asked."
        );
    }
    for hit in &answer.hits {
        text.push('\n');
        text.push_str(&hit.line());
    }
    if let Some(next) = answer.next_offset {
        let _ = write!(
            text,
            "\n{} more: ask again with `offset` {next} for the next page.",
            answer.total.saturating_sub(next)
        );
    }
    if answer.total >= MAX_START_RECORD - 1 {
        let _ = write!(
            text,
            "\nOnly the first {} hits of a search can be reached: narrow it (a journal, an organisation, a \
             document type, a shorter date range) rather than paging deep.",
            MAX_START_RECORD - 1
        );
    }
    let shown = SearchShown {
        searched: asked.searched.clone(),
        results: answer.hits.iter().map(Publication::of).collect(),
        tally: search_tally(answer),
        warnings: answer.warnings.clone(),
    };
    Rendered {
        text,
        structured: Structure::Own(json!(shown)),
    }
}

/// All hits of the search (exact) and the next reachable page.
fn search_tally(answer: &SearchAnswer) -> Tally {
    Tally {
        total: Some(answer.total),
        total_is_exact: true,
        next_offset: answer.next_offset,
    }
}

/// `ob_search`'s page as the shared vocabulary's listing: what its structured content
/// holds of it, typed.
pub fn listing(answer: &SearchAnswer) -> Listing {
    Listing {
        results: answer.hits.iter().map(|h| Publication::of(h).item).collect(),
        tally: search_tally(answer),
    }
}

/// What `ob_document` keeps of a publication's record.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct RecordAnswer {
    /// The publication.
    pub publication: Hit,
    /// Where its XML rendition is, if it has one.
    pub xml_url: Option<String>,
    /// Where its PDF is on the platform's own host, read for a publication without an
    /// XML rendition.
    #[serde(default)]
    pub pdf_item_url: Option<String>,
}

/// What `ob_document` keeps of a publication's text.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum TextAnswer {
    /// The text of the XML rendition (or, for a PDF-only publication, of its PDF), in
    /// paragraphs.
    Text {
        /// The text.
        text: String,
        /// Read from the PDF (a publication without an XML rendition).
        #[serde(default)]
        from_pdf: bool,
    },
    /// The XML rendition is an empty template: the platform has no text rendition.
    EmptyTemplate,
    /// A PDF-only publication whose PDF has no text layer (a scan).
    NoTextLayer {
        /// Its pages.
        pages: u32,
    },
}

/// Where a publication's text is.
#[derive(Clone, Copy, Debug)]
pub enum TextSource<'a> {
    /// Read from the XML rendition, or from the PDF of a PDF-only publication.
    Read(&'a TextAnswer),
    /// There is no XML rendition and no PDF on the platform's host to read.
    None,
}

/// `ob_document`'s structured content: the metadata and where the page of text is. The
/// page itself is in the text content only (never twice): its last `text_length`
/// characters.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, JsonSchema)]
pub struct DocumentOutput {
    /// The publication's metadata.
    #[serde(flatten)]
    pub publication: Publication,
    /// True when its text was read (from the XML rendition, or from the PDF of a
    /// PDF-only publication).
    pub has_text: bool,
    /// The character offset the page of text starts at.
    pub text_offset: usize,
    /// Characters of text in this answer: the last `text_length` characters of the text
    /// content.
    pub text_length: usize,
    /// Characters of text in the whole publication.
    pub total_length: usize,
    /// The `offset` that asks for the rest of the text, when there is more.
    pub next_offset: Option<usize>,
    /// True when more text follows this page.
    pub has_more: bool,
    /// Why there is no text (PDF only, or an empty XML template).
    pub note: Option<String>,
}

/// The publication as a person knows it: its title and its page, as the structured
/// content's publication says them.
pub fn head(record: &RecordAnswer) -> Head {
    let item = &Publication::of(&record.publication).item;
    Head::new(item.title.clone(), item.url.clone())
}

/// `ob_document`'s result: the metadata, then the text page (`offset`, `length` in
/// characters) at the end of the text content, or why there is none.
pub fn document(record: &RecordAnswer, text: TextSource<'_>, served: Served, offset: usize, length: usize) -> Rendered {
    let p = &record.publication;
    let mut head = format!("{}: {}", p.identifier, p.title);
    if let Some(j) = &p.publication {
        let _ = write!(
            head,
            " ({j}{})",
            p.number.as_deref().map(|n| format!(" {n}")).unwrap_or_default()
        );
    }
    if !p.organizations.is_empty() {
        let _ = write!(head, " — {}", p.organizations.join(", "));
    }
    if let Some(d) = &p.published {
        let _ = write!(head, "; published {d}");
    }
    if let Some(d) = &p.document_date {
        let _ = write!(head, ", dated {d}");
    }
    let mut out = DocumentOutput {
        publication: Publication::of(p),
        has_text: false,
        text_offset: 0,
        text_length: 0,
        total_length: 0,
        next_offset: None,
        has_more: false,
        note: None,
    };
    let pdf = p.pdf_url.as_deref().unwrap_or("no PDF link given");
    let text = match text {
        TextSource::Read(TextAnswer::Text { text, from_pdf }) => {
            if *from_pdf {
                out.note = Some("PDF only: the text was read from the PDF".to_owned());
            }
            let total = text.chars().count();
            let start = offset.min(total);
            let page: String = text.chars().skip(start).take(length).collect();
            let shown = page.chars().count();
            let end = start + shown;
            let next = (end < total).then_some(end);
            out.has_text = true;
            out.text_offset = start;
            out.text_length = shown;
            out.total_length = total;
            out.next_offset = next;
            out.has_more = next.is_some();
            format!(
                "{head}{}. {}Characters {start}–{end} of {total}{}:\n\n{page}",
                provenance(served),
                if *from_pdf {
                    format!("No XML rendition; the text is read from the PDF ({pdf}). ")
                } else {
                    String::new()
                },
                match next {
                    Some(next) => format!(
                        "; {} more: ask again with `offset` {next} (and a `length` up to 100000)",
                        total - end
                    ),
                    None if start >= total && total > 0 => format!("; the text ends before `offset` {offset}"),
                    None => String::new(),
                },
            )
        }
        TextSource::Read(TextAnswer::EmptyTemplate) => {
            out.note = Some("no text rendition: the XML rendition is an empty template".to_owned());
            format!(
                "{head}{}.\nNo text rendition: Officiële Bekendmakingen' XML for this publication is an empty \
                 template. The publication itself is the PDF: {pdf}",
                provenance(served)
            )
        }
        TextSource::Read(TextAnswer::NoTextLayer { pages }) => {
            out.note = Some(format!(
                "PDF only, and the PDF has no text layer ({pages} pages, a scan)"
            ));
            format!(
                "{head}{}.\nThis publication has no XML rendition, and its PDF ({pages} pages) has no text layer \
                 (a scan): BesluitBron cannot read it. The PDF: {pdf}",
                provenance(served)
            )
        }
        TextSource::None => no_rendition(p, &head, served, &mut out.note),
    };
    Rendered {
        text,
        // A plain struct of strings and numbers: serializing it cannot fail.
        structured: Structure::Own(serde_json::to_value(&out).unwrap_or_default()),
    }
}

/// `ob_document`'s text where the record lists no XML rendition: the PDF it lists, or
/// that it lists none (a record without text renditions), never an empty text.
fn no_rendition(p: &Hit, head: &str, served: Served, note: &mut Option<String>) -> String {
    match &p.pdf_url {
        Some(pdf) => {
            *note = Some("PDF only: the text is in the PDF".to_owned());
            format!(
                "{head}{}.\nThis publication has no XML rendition; its text is in the PDF: {pdf}",
                provenance(served)
            )
        }
        None => {
            *note = Some("no text rendition listed".to_owned());
            format!(
                "{head}{}.\nThe record lists no XML rendition and no PDF: there is no text to read here. \
                 The page for people: {}",
                provenance(served),
                p.url.as_deref().unwrap_or("none given")
            )
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::platforms::ob::Manifestation;

    /// The rendered text and structured content (`answer` is the kept answer, for a
    /// structure that is the answer itself).
    fn snapshot(name: &str, r: &Rendered, answer: &impl Serialize) {
        let payload = crate::driver::Payload::from_bytes(serde_json::to_vec(answer).expect("encodes"));
        let structured = r.structured_value(&payload).expect("a structure");
        let text = format!(
            "{}\n---\n{}",
            r.text,
            serde_json::to_string_pretty(&structured).expect("json")
        );
        insta::with_settings!({snapshot_path => "../../../../snapshots/render", prepend_module_to_snapshot => false}, {
            insta::assert_snapshot!(name, text);
        });
    }

    fn asked(searched: &str, filters: &[&str]) -> Asked {
        Asked {
            searched: searched.to_owned(),
            filters: filters.iter().map(|f| (*f).to_owned()).collect(),
        }
    }

    /// A page an older BesluitBron kept, with the first asker's words in it, still reads
    /// (the buffer outlives a release when its version is pinned), and its words are
    /// never shown: the asker's are.
    #[test]
    fn a_search_kept_with_an_askers_words_reads_and_shows_the_next_askers() {
        let kept = serde_json::json!({
            "searched": "the words `geheimX*`",
            "total": 0,
            "offset": 0,
            "hits": [],
            "next_offset": null,
            "warnings": [],
            "filters": ["query", "date_field"],
        });
        let answer: SearchAnswer = serde_json::from_value(kept).expect("an older kept page reads");
        let r = search(&answer, Served::Cached, &asked("the words `geheimX ==`", &["query"]));
        assert!(r.text.contains("for the words `geheimX ==`"), "{}", r.text);
        assert!(
            !r.text.contains("geheimX*") && !r.text.contains("date_field"),
            "{}",
            r.text
        );
    }

    fn record(n: u32, kinds: &[&str]) -> ObRecord {
        ObRecord {
            identifier: format!("gmb-2026-{n}"),
            title: format!("Verordening parkeren {n}"),
            document_type: Some("Verordening".into()),
            creators: vec!["Utrecht".into()],
            date: Some("2026-02-26".into()),
            available: Some("2026-03-04".into()),
            subjects: vec!["verkeer".into()],
            publication: Some("Gemeenteblad".into()),
            number: Some(n.to_string()),
            organization_type: Some("gemeente".into()),
            preferred_url: Some(format!("https://zoek.officielebekendmakingen.nl/gmb-2026-{n}.html")),
            pdf_url: Some(format!("https://repository.overheid.nl/frbr/gmb-2026-{n}.pdf")),
            manifestations: kinds
                .iter()
                .map(|k| Manifestation {
                    kind: (*k).to_owned(),
                    url: format!("https://repository.overheid.nl/frbr/gmb-2026-{n}.{k}"),
                })
                .collect(),
            ..ObRecord::default()
        }
    }

    #[test]
    fn a_search_page_with_a_warning_and_a_next_page() {
        let page = SearchPage {
            total: 12_000,
            records: vec![record(1, &["xml", "pdf"]), record(2, &["pdf"])],
            next_offset: Some(2),
            warnings: vec!["Ongeldige zoekterm genegeerd (dt.date<= 2026-02-29) [SEARCH-IGNOREDQTEXT]".into()],
        };
        let answer = SearchAnswer::new(0, page);
        snapshot(
            "ob_search",
            &search(&answer, Served::Fetched, &asked("the words `parkeren`", &[])),
            &answer,
        );
    }

    #[test]
    fn an_empty_search_says_what_was_searched_and_how_to_widen_it() {
        let page = SearchPage {
            total: 0,
            records: vec![],
            next_offset: None,
            warnings: vec![],
        };
        let answer = SearchAnswer::new(0, page);
        let r = search(
            &answer,
            Served::Cached,
            &asked(
                "the words `xyzzy`, in Gemeenteblad",
                &["query", "publication", "date_from"],
            ),
        );
        assert!(
            r.text.starts_with(
                "No publications found at Officiële Bekendmakingen for the words `xyzzy`, in Gemeenteblad (from \
                 BesluitBron's buffer). To widen: fewer or other words in `query`"
            ),
            "{}",
            r.text
        );
        assert!(
            r.text.contains("leave out `publication`; widen `date_from`"),
            "{}",
            r.text
        );
        assert!(r.text.contains("obv_search"), "{}", r.text);
        snapshot("ob_search_empty", &r, &answer);
    }

    #[test]
    fn the_last_reachable_page_offers_no_next_one() {
        let page = SearchPage {
            total: 50_000,
            records: vec![record(1, &["xml"])],
            next_offset: Some(9_999),
            warnings: vec![],
        };
        let answer = SearchAnswer::new(9_998, page);
        assert_eq!(answer.next_offset, None);
        assert!(
            search(&answer, Served::Fetched, &asked("all publications", &[]))
                .text
                .contains("Only the first 9999 hits")
        );
    }

    #[test]
    fn a_document_with_text_an_empty_template_and_a_pdf_only_item() {
        let with_text = RecordAnswer {
            publication: Hit::from(&record(7, &["xml", "html", "pdf"])),
            xml_url: Some("https://repository.overheid.nl/frbr/gmb-2026-7.xml".into()),
            pdf_item_url: None,
        };
        let text = TextAnswer::Text {
            text: "Verordening parkeren 7\n\nArtikel 1. Parkeren is alleen toegestaan in vakken.".into(),
            from_pdf: false,
        };
        snapshot(
            "ob_document",
            &document(&with_text, TextSource::Read(&text), Served::Fetched, 0, 30),
            &text,
        );
        let empty = document(
            &with_text,
            TextSource::Read(&TextAnswer::EmptyTemplate),
            Served::Fetched,
            0,
            30,
        );
        assert!(empty.text.contains("No text rendition"), "{}", empty.text);
        assert!(empty.text.contains("gmb-2026-7.pdf"), "{}", empty.text);
        let pdf_only = RecordAnswer {
            publication: Hit::from(&record(8, &["pdf"])),
            xml_url: None,
            pdf_item_url: None,
        };
        snapshot(
            "ob_document_pdf_only",
            &document(&pdf_only, TextSource::None, Served::Cached, 0, 30),
            &pdf_only,
        );
        // A record that lists no text rendition at all: said, with the page for people.
        let mut bare = record(9, &["metadataowms"]);
        bare.pdf_url = None;
        let none = RecordAnswer {
            publication: Hit::from(&bare),
            xml_url: None,
            pdf_item_url: None,
        };
        let said = document(&none, TextSource::None, Served::Fetched, 0, 30).text;
        assert!(
            said.contains("lists no XML rendition and no PDF") && !said.contains("in the PDF"),
            "{said}"
        );
        // A PDF-only publication whose PDF was read, and one that is a scan.
        let read = TextAnswer::Text {
            text: "Besluit 8\n\nArtikel 1. Dit besluit treedt in werking.".into(),
            from_pdf: true,
        };
        let from_pdf = document(&pdf_only, TextSource::Read(&read), Served::Fetched, 0, 30);
        assert!(
            from_pdf.text.contains("read from the PDF") && from_pdf.text.ends_with("Besluit 8\n\nArtikel 1. Dit besl"),
            "{}",
            from_pdf.text
        );
        let scan = document(
            &pdf_only,
            TextSource::Read(&TextAnswer::NoTextLayer { pages: 2 }),
            Served::Fetched,
            0,
            30,
        );
        assert!(
            scan.text.contains("no text layer") && scan.text.contains("gmb-2026-8"),
            "{}",
            scan.text
        );
        // A text kept before PDFs were read decodes as an XML rendition's.
        let old: TextAnswer = serde_json::from_str(r#"{"kind":"text","text":"x"}"#).expect("decodes");
        assert_eq!(
            old,
            TextAnswer::Text {
                text: "x".into(),
                from_pdf: false
            }
        );
    }
}
