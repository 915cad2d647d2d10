//! Rechtspraak's XML as Rust values: the Atom feed of `/uitspraken/zoeken`, the RDF
//! metadata and text of `/uitspraken/content`, and the three value lists.
//!
//! Each parser is a `pub` function from bytes to a value or a short reason (so a fuzz
//! target can call it): [`parse_feed`], [`parse_ruling`], [`parse_courts`],
//! [`parse_areas`], [`parse_procedures`]. None of them panics, whatever it is given.
//!
//! Invariants: identifiers from the value lists are trimmed and their inner whitespace
//! folded to one space, so the historic `…/AG DH` keeps its single space; an empty value
//! list is an error, never an empty success; an Atom summary of `-` means "none".

use rmcp::schemars;
use serde::{Deserialize, Serialize};

use super::body;
use super::xml::{self, ATOM, DCTERMS, ECLI, Element, PSI, RDF, fold_space};

/// One page of the search feed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Feed {
    /// "Aantal gevonden ECLI's: N" from the subtitle, when present.
    pub total: Option<u64>,
    /// The entries, in the feed's order.
    pub entries: Vec<FeedEntry>,
}

/// One entry of the search feed.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct FeedEntry {
    /// The ECLI.
    pub ecli: String,
    /// The court's name, from the title.
    pub court: String,
    /// The decision date, `YYYY-MM-DD`, from the title.
    pub date: Option<String>,
    /// The case number(s), from the title.
    pub case_number: Option<String>,
    /// The inhoudsindicatie as the feed gives it (about 400 characters); `None` for "-".
    pub summary: Option<String>,
    /// When it was last modified.
    pub updated: Option<String>,
    /// The ruling's page on the website.
    pub link: Option<String>,
    /// `doc` (the text was withdrawn) or `ecli` (the whole ECLI was), when withdrawn.
    pub deleted: Option<String>,
}

/// A court from `/Waardelijst/Instanties`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Court {
    /// The identifier the search's `creator` takes (OWMS URI, or a historic psi form).
    pub identifier: String,
    /// Its name, e.g. `Rechtbank Amsterdam`.
    pub name: String,
    /// Its abbreviation, e.g. `RBAMS`.
    pub abbreviation: Option<String>,
    /// Its kind, e.g. `Rechtbank`.
    pub kind: Option<String>,
    /// First day.
    pub begin: Option<String>,
    /// Last day, for courts that no longer exist.
    pub end: Option<String>,
}

/// An area of law from `/Waardelijst/Rechtsgebieden`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Area {
    /// The identifier the search's `subject` takes.
    pub identifier: String,
    /// Its name, e.g. `Omgevingsrecht`.
    pub name: String,
    /// The identifier of the area it belongs to; `None` for a top-level area.
    pub parent: Option<String>,
}

/// A kind of procedure from `/Waardelijst/Proceduresoorten`.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Procedure {
    /// Its identifier, as rulings' metadata name it.
    pub identifier: String,
    /// Its name, e.g. `Hoger beroep`.
    pub name: String,
}

/// A metadata value with the identifier the platform gives it.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Labeled {
    /// The `resourceIdentifier`, when given.
    pub id: Option<String>,
    /// The text.
    pub name: String,
}

/// A formal relation to another ECLI.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Relation {
    /// The other ECLI.
    pub ecli: String,
    /// Its kind (`psi:type`'s last part, e.g. `conclusie`, `cassatie`, `hogerBeroep`).
    pub kind: Option<String>,
    /// Which way (`psi:aanleg`'s last part: `eerdereAanleg`, `latereAanleg`).
    pub direction: Option<String>,
    /// The outcome, when given (`psi:gevolg`).
    pub outcome: Option<String>,
    /// The platform's own wording.
    pub label: String,
}

/// A law the ruling's metadata says it applies (`dcterms:references`, "Wetsverwijzing").
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Reference {
    /// The `resourceIdentifier` as the platform gives it
    /// (`1.0:v:BWB:BWBR0005537&artikel=1:3&g=1997-10-14`, `jci1.31:c:BWBR0035925&g=2022-08-30`).
    pub identifier: Option<String>,
    /// The platform's label, e.g. `Algemene wet bestuursrecht 1:3`.
    pub label: String,
    /// The law, when the identifier names a BWB id ([`LawReference`]).
    pub law: Option<LawReference>,
}

/// A reference to a law of the Basiswettenbestand, read from its identifier.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LawReference {
    /// The BWB id, e.g. `BWBR0005537`.
    pub bwb: String,
    /// The article (`artikel=`), e.g. `1:3`.
    pub article: Option<String>,
    /// The day the reference is valid on (`g=`), YYYY-MM-DD.
    pub valid_on: Option<String>,
}

impl LawReference {
    /// The law or article as BesluitBron reads it (`fetch`, `bwb_read`):
    /// `BWBR0005537#1:3`, or `BWBR0001854` for a whole law.
    pub fn id(&self) -> String {
        match &self.article {
            Some(article) => format!("{}#{article}", self.bwb),
            None => self.bwb.clone(),
        }
    }
}

/// The law a reference identifier names: `1.0:v:BWB:BWBR…&artikel=…&g=…` or a
/// juriconnect form `jci1.31:c:BWBR…&artikel=…&g=…` (any `jci` version, `c` or `v`);
/// `None` for any other form. Values are percent-decoded.
pub fn law_reference(identifier: &str) -> Option<LawReference> {
    let identifier = identifier.trim();
    let mut parts = identifier.split('&');
    let head = parts.next()?;
    let id = if let Some(id) = head.strip_prefix("1.0:v:BWB:") {
        id
    } else {
        let (version, rest) = head.split_once(':')?;
        let jci = version.strip_prefix("jci")?;
        if jci.is_empty() || !jci.bytes().all(|b| b.is_ascii_digit() || b == b'.') {
            return None;
        }
        rest.strip_prefix("c:").or_else(|| rest.strip_prefix("v:"))?
    };
    let bwb = id.trim().to_ascii_uppercase();
    let b = bwb.as_bytes();
    let is_bwb = b.len() == 11
        && b.starts_with(b"BWB")
        && matches!(b[3], b'R' | b'V' | b'W')
        && b[4..].iter().all(u8::is_ascii_digit);
    if !is_bwb {
        return None;
    }
    let (mut article, mut valid_on) = (None, None);
    for part in parts {
        let Some((name, value)) = part.split_once('=') else {
            continue;
        };
        let value = percent_decoded(value.trim());
        if value.is_empty() {
            continue;
        }
        match name.trim() {
            "artikel" => article = Some(value),
            "g" => valid_on = Some(value),
            _ => {}
        }
    }
    Some(LawReference { bwb, article, valid_on })
}

/// `text` with its `%XX` escapes undone (a broken escape is kept as written).
fn percent_decoded(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match (
            bytes[i],
            bytes.get(i + 1).copied().and_then(hex),
            bytes.get(i + 2).copied().and_then(hex),
        ) {
            (b'%', Some(h), Some(l)) => {
                out.push((h * 16 + l) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

/// A ruling's text.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RulingText {
    /// `uitspraak` or `conclusie`.
    pub element: String,
    /// The readable text (see `body.rs`).
    pub text: String,
    /// Images mentioned in it.
    pub images: u32,
}

/// What `/uitspraken/content` says about one ECLI.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ruling {
    /// The ECLI.
    pub ecli: String,
    /// The court.
    pub court: Option<Labeled>,
    /// The decision date.
    pub date: Option<String>,
    /// The publication date.
    pub issued: Option<String>,
    /// Last modified.
    pub modified: Option<String>,
    /// Case numbers.
    pub case_numbers: Vec<String>,
    /// `Uitspraak` or `Conclusie`.
    pub kind: Option<String>,
    /// Procedures.
    pub procedures: Vec<Labeled>,
    /// Areas of law.
    pub areas: Vec<Labeled>,
    /// Formal relations.
    pub relations: Vec<Relation>,
    /// The laws it applies (`dcterms:references`), in the metadata's order.
    #[serde(default)]
    pub references: Vec<Reference>,
    /// Vindplaatsen (where it is published).
    pub vindplaatsen: Vec<String>,
    /// The LJN(s) it replaces.
    pub replaces: Vec<String>,
    /// The inhoudsindicatie.
    pub summary: Option<String>,
    /// The text; `None` for a metadata-only ECLI.
    pub text: Option<RulingText>,
}

/// Reads a search feed.
pub fn parse_feed(bytes: &[u8]) -> Result<Feed, String> {
    let root = xml::parse(bytes)?;
    if !root.is(ATOM, "feed") {
        return Err(format!("`{}` is not an Atom feed", root.name));
    }
    let total = root.child(ATOM, "subtitle").and_then(|s| {
        let text = s.trimmed_text();
        let digits: String = text
            .rsplit(':')
            .next()
            .unwrap_or("")
            .chars()
            .filter(|c| !c.is_whitespace() && *c != '.')
            .collect();
        digits.parse::<u64>().ok()
    });
    let mut entries = Vec::new();
    for e in root.children_named(ATOM, "entry") {
        let ecli = e.child(ATOM, "id").map(Element::trimmed_text).unwrap_or_default();
        if ecli.is_empty() {
            return Err("an entry without an id".into());
        }
        let title = e.child(ATOM, "title").map(Element::trimmed_text).unwrap_or_default();
        let (court, date, case_number) = split_title(&title, &ecli);
        let summary = e
            .child(ATOM, "summary")
            .map(Element::trimmed_text)
            .filter(|s| !s.is_empty() && s != "-");
        let link = e
            .child(ATOM, "link")
            .and_then(|l| l.attr("", "href"))
            .map(fold_space)
            .filter(|l| !l.is_empty());
        entries.push(FeedEntry {
            ecli,
            court,
            date,
            case_number,
            summary,
            updated: e.child(ATOM, "updated").map(Element::trimmed_text),
            link,
            deleted: e.attr("", "deleted").map(fold_space),
        });
    }
    Ok(Feed { total, entries })
}

/// Splits "ECLI, court, dd-mm-yyyy, case number" (court names and case numbers may hold
/// commas themselves; the date is the part that looks like one).
fn split_title(title: &str, ecli: &str) -> (String, Option<String>, Option<String>) {
    let parts: Vec<&str> = title.split(',').map(str::trim).collect();
    let start = usize::from(parts.first().is_some_and(|p| p.eq_ignore_ascii_case(ecli)));
    let date_at = parts
        .iter()
        .skip(start)
        .position(|p| dutch_date(p).is_some())
        .map(|i| i + start);
    match date_at {
        Some(i) => {
            let court = parts[start..i].join(", ");
            let case = parts[i + 1..].join(", ");
            (court, dutch_date(parts[i]), (!case.is_empty()).then_some(case))
        }
        None => (parts[start..].join(", "), None, None),
    }
}

/// `dd-mm-yyyy` as `yyyy-mm-dd`.
fn dutch_date(text: &str) -> Option<String> {
    let b = text.as_bytes();
    (b.len() == 10 && b[2] == b'-' && b[5] == b'-' && text.bytes().filter(u8::is_ascii_digit).count() == 8)
        .then(|| format!("{}-{}-{}", &text[6..10], &text[3..5], &text[0..2]))
}

/// Reads `/Waardelijst/Instanties`.
pub fn parse_courts(bytes: &[u8]) -> Result<Vec<Court>, String> {
    let root = xml::parse(bytes)?;
    if root.name != "Instanties" {
        return Err(format!("`{}` is not the Instanties list", root.name));
    }
    let field = |e: &Element, name: &str| e.child_local(name).map(Element::trimmed_text).filter(|t| !t.is_empty());
    let courts: Vec<Court> = root
        .elements()
        .filter(|e| e.name == "Instantie")
        .filter_map(|e| {
            Some(Court {
                identifier: field(e, "Identifier")?,
                name: field(e, "Naam")?,
                abbreviation: field(e, "Afkorting"),
                kind: field(e, "Type"),
                begin: field(e, "BeginDate"),
                end: field(e, "EndDate"),
            })
        })
        .collect();
    non_empty(courts, "Instanties")
}

/// Reads `/Waardelijst/Rechtsgebieden`, nested areas flattened with their parent.
pub fn parse_areas(bytes: &[u8]) -> Result<Vec<Area>, String> {
    let root = xml::parse(bytes)?;
    if root.name != "Rechtsgebieden" {
        return Err(format!("`{}` is not the Rechtsgebieden list", root.name));
    }
    let mut areas = Vec::new();
    let mut stack: Vec<(&Element, Option<String>)> = root
        .elements()
        .filter(|e| e.name == "Rechtsgebied")
        .map(|e| (e, None))
        .collect();
    stack.reverse();
    while let Some((e, parent)) = stack.pop() {
        let identifier = e
            .child_local("Identifier")
            .map(Element::trimmed_text)
            .unwrap_or_default();
        let name = e.child_local("Naam").map(Element::trimmed_text).unwrap_or_default();
        let mut nested: Vec<(&Element, Option<String>)> = e
            .elements()
            .filter(|c| c.name == "Rechtsgebied")
            .map(|c| (c, Some(identifier.clone())))
            .collect();
        nested.reverse();
        if !identifier.is_empty() && !name.is_empty() {
            areas.push(Area {
                identifier,
                name,
                parent,
            });
        }
        stack.extend(nested);
    }
    non_empty(areas, "Rechtsgebieden")
}

/// Reads `/Waardelijst/Proceduresoorten`.
pub fn parse_procedures(bytes: &[u8]) -> Result<Vec<Procedure>, String> {
    let root = xml::parse(bytes)?;
    if root.name != "Proceduresoorten" {
        return Err(format!("`{}` is not the Proceduresoorten list", root.name));
    }
    let procedures: Vec<Procedure> = root
        .elements()
        .filter(|e| e.name == "Proceduresoort")
        .filter_map(|e| {
            let identifier = e.child_local("Identifier")?.trimmed_text();
            let name = e.child_local("Naam")?.trimmed_text();
            (!identifier.is_empty() && !name.is_empty()).then_some(Procedure { identifier, name })
        })
        .collect();
    non_empty(procedures, "Proceduresoorten")
}

fn non_empty<T>(items: Vec<T>, list: &str) -> Result<Vec<T>, String> {
    if items.is_empty() {
        Err(format!("the {list} list holds no entries"))
    } else {
        Ok(items)
    }
}

/// Reads `/uitspraken/content` for `ecli`: the metadata (the `rdf:Description` without
/// `rdf:about`), the inhoudsindicatie and the text of `uitspraak` or `conclusie`.
pub fn parse_ruling(bytes: &[u8]) -> Result<Ruling, String> {
    let root = xml::parse(bytes)?;
    if root.name != "open-rechtspraak" {
        return Err(format!("`{}` is not an open-rechtspraak document", root.name));
    }
    let rdf = root.child(RDF, "RDF").ok_or("no rdf:RDF metadata")?;
    let descriptions: Vec<&Element> = rdf.children_named(RDF, "Description").collect();
    let meta = descriptions
        .iter()
        .find(|d| d.attr(RDF, "about").is_none())
        .or(descriptions.first())
        .ok_or("no rdf:Description")?;
    let texts = |ns: &str, name: &str| -> Vec<String> {
        meta.children_named(ns, name)
            .map(Element::trimmed_text)
            .filter(|t| !t.is_empty())
            .collect()
    };
    let first = |ns: &str, name: &str| texts(ns, name).into_iter().next();
    let labeled = |ns: &str, name: &str| -> Vec<Labeled> {
        meta.children_named(ns, name)
            .map(|e| Labeled {
                id: e.attr_local("resourceIdentifier").map(fold_space),
                name: e.trimmed_text(),
            })
            .filter(|l| !l.name.is_empty() || l.id.is_some())
            .collect()
    };
    let ecli = first(DCTERMS, "identifier").ok_or("no dcterms:identifier")?;
    let relations = meta
        .children_named(DCTERMS, "relation")
        .filter_map(|e| {
            let other = e
                .attr(ECLI, "resourceIdentifier")
                .or_else(|| e.attr_local("resourceIdentifier"))?;
            Some(Relation {
                ecli: fold_space(other),
                kind: e.attr(PSI, "type").map(last_part),
                direction: e.attr(PSI, "aanleg").map(last_part),
                outcome: e.attr(PSI, "gevolg").map(last_part).filter(|g| !g.is_empty()),
                label: e.trimmed_text(),
            })
        })
        .collect();
    let references = references(meta);
    let vindplaatsen = meta
        .children_named(DCTERMS, "hasVersion")
        .flat_map(|v| {
            let items: Vec<String> = v
                .elements()
                .flat_map(|list| list.elements().map(Element::trimmed_text).collect::<Vec<_>>())
                .filter(|t| !t.is_empty())
                .collect();
            if items.is_empty() {
                vec![v.trimmed_text()].into_iter().filter(|t| !t.is_empty()).collect()
            } else {
                items
            }
        })
        .collect();
    let case_numbers = texts(PSI, "zaaknummer")
        .iter()
        .flat_map(|z| z.split(',').map(str::trim).filter(|z| !z.is_empty()).map(str::to_owned))
        .collect();
    let summary = root
        .child_local("inhoudsindicatie")
        .map(|e| body::render(e).text)
        .filter(|s| !s.is_empty() && s != "-");
    let text = root
        .elements()
        .find(|e| e.name == "uitspraak" || e.name == "conclusie")
        .map(|e| {
            let rendered = body::render(e);
            RulingText {
                element: e.name.clone(),
                text: rendered.text,
                images: rendered.images,
            }
        });
    Ok(Ruling {
        ecli,
        court: labeled(DCTERMS, "creator").into_iter().next(),
        date: first(DCTERMS, "date"),
        issued: first(DCTERMS, "issued"),
        modified: first(DCTERMS, "modified"),
        case_numbers,
        kind: first(DCTERMS, "type"),
        procedures: labeled(PSI, "procedure"),
        areas: labeled(DCTERMS, "subject"),
        relations,
        references,
        vindplaatsen,
        replaces: texts(DCTERMS, "replaces"),
        summary,
        text,
    })
}

/// The metadata's `dcterms:references`, in order, each with the law it names if any.
fn references(meta: &Element) -> Vec<Reference> {
    meta.children_named(DCTERMS, "references")
        .map(|e| {
            let identifier = e.attr_local("resourceIdentifier").map(fold_space);
            Reference {
                law: identifier.as_deref().and_then(law_reference),
                identifier,
                label: e.trimmed_text(),
            }
        })
        .filter(|r| !r.label.is_empty() || r.identifier.is_some())
        .collect()
}

/// The last part of a URI (after `#` or `/`), percent-escapes of spaces undone.
fn last_part(uri: &str) -> String {
    let uri = fold_space(uri);
    let part = uri.rsplit(['#', '/']).next().unwrap_or(&uri);
    part.replace("%20", " ")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn law(bwb: &str, article: Option<&str>, valid_on: Option<&str>) -> Option<LawReference> {
        Some(LawReference {
            bwb: bwb.into(),
            article: article.map(Into::into),
            valid_on: valid_on.map(Into::into),
        })
    }

    #[test]
    fn law_references_read_in_both_forms_and_others_are_none() {
        // Real forms: a ruling's metadata (1.0:v:BWB) and a 2025 ruling's (jci1.31).
        assert_eq!(
            law_reference("1.0:v:BWB:BWBR0005537&artikel=1:3&g=1997-10-14"),
            law("BWBR0005537", Some("1:3"), Some("1997-10-14"))
        );
        assert_eq!(law_reference("1.0:v:BWB:BWBR0001854"), law("BWBR0001854", None, None));
        assert_eq!(
            law_reference("jci1.31:c:BWBR0035925&g=2022-08-30"),
            law("BWBR0035925", None, Some("2022-08-30"))
        );
        assert_eq!(
            law_reference("jci1.3:c:BWBR0005288&boek=5&titeldeel=1&artikel=1&z=2024-01-01&g=2024-01-01"),
            law("BWBR0005288", Some("1"), Some("2024-01-01"))
        );
        assert_eq!(
            law_reference("jci1.3:c:bwbr0005537&artikel=1%3A3"),
            law("BWBR0005537", Some("1:3"), None)
        );
        for other in [
            "",
            "eu:32016R0679",
            "CVDR112779",
            "1.0:v:BWB:",
            "1.0:v:BWB:BWBR00055",
            "jci:c:BWBR0005537",
            "jcix:c:BWBR0005537",
            "jci1.3:x:BWBR0005537",
            "%",
        ] {
            assert_eq!(law_reference(other), None, "{other}");
        }
        assert_eq!(percent_decoded("a%2"), "a%2");
        assert_eq!(percent_decoded("%e2%82%ac"), "€");
    }

    #[test]
    fn titles_split_around_the_date() {
        assert_eq!(
            split_title(
                "ECLI:NL:HR:2026:1, Hoge Raad, 09-01-2026, 25/00001, 25/00002",
                "ECLI:NL:HR:2026:1"
            ),
            (
                "Hoge Raad".into(),
                Some("2026-01-09".into()),
                Some("25/00001, 25/00002".into())
            )
        );
        assert_eq!(
            split_title("ECLI:NL:X:1:1, Rechtbank X", "ECLI:NL:X:1:1"),
            ("Rechtbank X".into(), None, None)
        );
    }

    #[test]
    fn a_feed_with_a_count_deleted_entries_and_empty_summaries() {
        let feed = parse_feed(
            br#"<feed xmlns="http://www.w3.org/2005/Atom"><subtitle>Aantal gevonden ECLI's: 3178259</subtitle>
            <entry><id>ECLI:NL:HR:2026:1</id><title>ECLI:NL:HR:2026:1, Hoge Raad, 09-01-2026, 25/00001</title>
              <summary>-</summary><updated>2026-01-10T09:00:00+01:00</updated>
              <link rel="alternate" href="https://uitspraken.rechtspraak.nl/InzienDocument?id=ECLI:NL:HR:2026:1"/></entry>
            <entry deleted="ecli"><id>ECLI:NL:HR:2026:2</id><title>ECLI:NL:HR:2026:2</title></entry></feed>"#,
        )
        .unwrap();
        assert_eq!(feed.total, Some(3_178_259));
        assert_eq!(feed.entries.len(), 2);
        assert_eq!(feed.entries[0].summary, None);
        assert_eq!(feed.entries[0].date.as_deref(), Some("2026-01-09"));
        assert_eq!(feed.entries[1].deleted.as_deref(), Some("ecli"));
        assert!(parse_feed(b"<html><body>Not found</body></html>").is_err());
        assert!(parse_feed(b"Ongeldige datum").is_err());
    }

    #[test]
    fn value_list_identifiers_are_trimmed_and_historic_forms_survive() {
        let courts = parse_courts(
            b"<Instanties><Instantie><Naam>Ambtenarengerecht Den Haag</Naam><Afkorting>AGDH</Afkorting>
              <Type>Ambtenarengerecht</Type><BeginDate>1900-01-01</BeginDate><EndDate>1994-01-01</EndDate>
              <Identifier>\n   http://psi.rechtspraak.nl/AG DH\n  </Identifier></Instantie></Instanties>",
        )
        .unwrap();
        assert_eq!(courts[0].identifier, "http://psi.rechtspraak.nl/AG DH");
        assert_eq!(courts[0].end.as_deref(), Some("1994-01-01"));
        assert!(parse_courts(b"<Instanties/>").is_err(), "an empty list is no success");
        let areas = parse_areas(
            b"<Rechtsgebieden><Rechtsgebied><Identifier>http://psi.rechtspraak.nl/rechtsgebied#bestuursrecht</Identifier>
              <Naam>Bestuursrecht</Naam><Rechtsgebied><Identifier> http://psi.rechtspraak.nl/rechtsgebied#bestuursrecht_omgevingsrecht </Identifier>
              <Naam>Omgevingsrecht</Naam></Rechtsgebied></Rechtsgebied></Rechtsgebieden>",
        )
        .unwrap();
        assert_eq!(areas.len(), 2);
        assert_eq!(areas[1].parent.as_deref(), Some(areas[0].identifier.as_str()));
    }
}
