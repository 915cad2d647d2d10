//! The Officiële Bekendmakingen fake's parliamentary items of both chambers
//! (PLATFORMS.md §12a.4): a few Eerste Kamer items generated from a seed of their own (so
//! the generated corpus before them never moves), and the real records of
//! `corpus/ob-chamber/` (KOOP's own test data: SRU records and `metadata_owms` files of
//! Tweede and Eerste Kamer items).
//!
//! Invariants: the chamber is the creator, written as the platform writes it
//! (`Eerste Kamer der Staten-Generaal`), and the identifier's prefix carries it where the
//! platform's does (`h-ek-…`, `ah-ek-…`); the Eerste Kamer's Kamerstukken are numbered
//! with letters (`kst-36600-A`). A real item's record says only what its corpus file says
//! (an SRU record, else its `metadata_owms` file); it has no text rendition (the corpus
//! holds none), only its `metadata_owms` file, served byte for byte, where the corpus has
//! one. An item with both is described by its SRU record.
//!
//! What this module does not do: the joint session's items (no record of one was found),
//! or the `html`, `odt`, `pdf` and `xml` renditions a real record lists.

#[cfg(test)]
use crate::ob_publication::owms_file;
use crate::ob_publication::{ObPublication, Renditions};
use crate::real::{self, Element, RealFile};
use crate::{day, days_after, mix64, pick};

/// Eerste Kamer items generated (after the generated corpus, before the real files).
pub const EERSTE_KAMER_COUNT: usize = 12;

/// The Eerste Kamer's creator, as the platform writes it.
pub const EERSTE_KAMER: &str = "Eerste Kamer der Staten-Generaal";

const SEED: u64 = 0x0E0E_2026;

/// (subject, a sentence of the debate or paper).
const TOPICS: [(&str, &str); 4] = [
    (
        "stikstof",
        "De Kamer bespreekt de gevolgen van de stikstofregels voor de natuurvergunningen.",
    ),
    (
        "omgevingswet",
        "De senatoren vragen de regering naar de invoering van de omgevingswet in de gemeenten.",
    ),
    (
        "woningbouw",
        "De memorie van antwoord gaat in op de financiering van de woningbouw.",
    ),
    (
        "begroting",
        "De Kamer stemt over de begroting en de motie over de uitvoering daarvan.",
    ),
];

/// The generated Eerste Kamer items: in turn a Kamerstuk, a Handeling and an answer to
/// written questions, each with a text.
pub fn generated() -> Vec<ObPublication> {
    let first_day = day(2025, 9, 16);
    (0..EERSTE_KAMER_COUNT)
        .map(|i| {
            let n = i as u64;
            let (subject, sentence) = TOPICS[pick(SEED, n, TOPICS.len())];
            let held = days_after(first_day, mix64(SEED ^ n) % 270);
            let available_on = days_after(held, 1 + mix64(SEED ^ (n << 8)) % 5);
            let number = i / 3 + 1;
            let letter = char::from(b'A' + (i / 3) as u8);
            let (kind, publication, document_type, identifier, group, dossier, subnumber) = match i % 3 {
                0 => (
                    "kst",
                    "Kamerstuk",
                    "Memorie van antwoord",
                    format!("kst-36600-{letter}"),
                    "36600".to_owned(),
                    Some("36600".to_owned()),
                    Some(letter.to_string()),
                ),
                1 => (
                    "h-ek",
                    "Handelingen",
                    "Handelingen",
                    format!("h-ek-20252026-{number}-{}", i % 4 + 1),
                    "20252026".to_owned(),
                    None,
                    None,
                ),
                _ => (
                    "ah-ek",
                    "Kamervragen (Aanhangsel)",
                    "Antwoord schriftelijke vragen",
                    format!("ah-ek-20252026-{number}"),
                    "20252026".to_owned(),
                    None,
                    None,
                ),
            };
            let title = format!("{document_type} Eerste Kamer {subject}");
            let available = available_on.format("%Y-%m-%d").to_string();
            ObPublication {
                paragraphs: vec![
                    title.clone(),
                    sentence.to_owned(),
                    format!("De voorzitter van de Eerste Kamer sluit het onderwerp {subject} af."),
                    format!("Kenmerk {identifier}."),
                ],
                identifier,
                kind,
                group,
                title,
                document_type: Some(document_type.to_owned()),
                creator: Some(EERSTE_KAMER.to_owned()),
                organization_type: Some("staten generaal".to_owned()),
                publication,
                number: None,
                volume: None,
                dossier,
                subnumber,
                date: Some(held.format("%Y-%m-%d").to_string()),
                available: Some(available),
                subjects: vec![subject.to_owned()],
                renditions: Renditions::Full,
            }
        })
        .collect()
}

/// Every real item of `corpus/ob-chamber/`, each once: those of the SRU files first (in
/// the files' order), then those only a `metadata_owms` file describes.
pub fn real_items() -> Vec<ObPublication> {
    let files = real::ob_chamber();
    let mut items: Vec<ObPublication> = Vec::new();
    let mut add = |meta: &Element, path: &str| {
        let item = describe(meta, path);
        if !items.iter().any(|p| p.identifier == item.identifier) {
            items.push(item);
        }
    };
    for file in files.iter().filter(|f| f.stem().contains("_sru")) {
        let doc = parse(file);
        let mut metas = Vec::new();
        doc.find_all("meta", &mut metas);
        for meta in metas {
            add(meta, file.path);
        }
    }
    for file in files.iter().filter(|f| f.stem().contains("metadata_owms")) {
        add(&parse(file), file.path);
    }
    items
}

fn parse(file: &RealFile) -> Element {
    real::parse(file.bytes).unwrap_or_else(|e| panic!("{}: {e}", file.path))
}

/// The identifier prefixes of parliamentary items, longest first (`ah-ek` before `h-ek`).
const KINDS: [&str; 11] = [
    "ah-ek", "ah-tk", "ag-ek", "ag-tk", "h-ek", "h-tk", "kv-ek", "kv-tk", "blg", "kst", "kv",
];

/// The journals parliamentary items appear in, as the platform writes them.
const JOURNALS: [&str; 6] = [
    "Kamerstuk",
    "Handelingen",
    "Kamervragen (Aanhangsel)",
    "Kamervragen zonder antwoord",
    "Niet-dossierstuk",
    "Agenda",
];

/// One real item from its record's `meta` (an SRU record) or its `owms-metadata` root.
fn describe(meta: &Element, path: &str) -> ObPublication {
    let text = |name: &str| meta.find(name).map(|e| e.text_without(&[], " "));
    let all = |name: &str| {
        let mut found = Vec::new();
        meta.find_all(name, &mut found);
        found
    };
    let identifier = text("identifier").unwrap_or_else(|| panic!("{path}: an item without identifier"));
    let kind = KINDS
        .into_iter()
        .find(|k| identifier.starts_with(&format!("{k}-")))
        .unwrap_or_else(|| panic!("{path}: {identifier} is of no known series"));
    // `officielepublicaties/h-ek/20202021`; else the dossier, or the session.
    let group = text("content-area")
        .and_then(|a| a.rsplit('/').next().map(str::to_owned))
        .or_else(|| text("dossiernummer"))
        .or_else(|| text("vergaderjaar").map(|y| y.replace('-', "")))
        .unwrap_or_else(|| "onopgemaakt".to_owned());
    let journal = text("publicatienaam").or_else(|| text("publicationName"));
    let publication = JOURNALS
        .into_iter()
        .find(|j| journal.as_deref() == Some(*j))
        .unwrap_or_else(|| panic!("{path}: {identifier} in no known journal ({journal:?})"));
    // The parliamentary kind (`Handeling`, `Bijlage`), not its subdivision.
    let types = all("type");
    let document_type = types
        .iter()
        .find(|t| t.attribute("scheme") == Some("OVERHEIDop.Parlementair"))
        .or(types.first())
        .map(|t| t.text_without(&[], " "));
    let subjects = all("subject")
        .into_iter()
        .chain(all("category"))
        .map(|s| s.text_without(&[], " "))
        .collect();
    ObPublication {
        title: text("title").unwrap_or_default(),
        document_type,
        creator: text("creator"),
        organization_type: text("organisatietype").or_else(|| text("organisationType")),
        publication,
        number: text("publicatienummer").or_else(|| text("publicationIssue")),
        volume: None,
        dossier: text("dossiernummer"),
        subnumber: text("ondernummer"),
        date: text("date").or_else(|| text("issued")),
        available: text("available"),
        subjects,
        paragraphs: Vec::new(),
        renditions: Renditions::RealRecord,
        kind,
        group,
        identifier,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_real_items_say_what_their_files_say() {
        let items = real_items();
        let ids: Vec<&str> = items.iter().map(|p| p.identifier.as_str()).collect();
        assert_eq!(items.len(), 19, "{ids:?}");
        let opening = items.iter().find(|p| p.identifier == "h-ek-20202021-1-1").unwrap();
        assert_eq!(
            (
                opening.title.as_str(),
                opening.creator.as_deref(),
                opening.publication,
                opening.kind,
                opening.group.as_str()
            ),
            (
                "Presentie en opening",
                Some(EERSTE_KAMER),
                "Handelingen",
                "h-ek",
                "20202021"
            )
        );
        assert_eq!(opening.document_type.as_deref(), Some("Handeling"));
        assert_eq!(
            (opening.date.as_deref(), opening.available.as_deref()),
            (Some("2020-09-22"), Some("2020-10-02"))
        );
        assert!(owms_file("h-ek-20202021-1-1").is_some());
        let questions = items.iter().find(|p| p.identifier == "kv-ek-215160000").unwrap();
        assert_eq!(questions.creator.as_deref(), Some(EERSTE_KAMER));
        let kst = items.iter().find(|p| p.identifier == "kst-35842-4").unwrap();
        assert_eq!(
            (kst.dossier.as_deref(), kst.subnumber.as_deref()),
            (Some("35842"), Some("4"))
        );
        assert_eq!(
            items
                .iter()
                .filter(|p| p.creator.as_deref() == Some(EERSTE_KAMER))
                .count(),
            5,
            "h-ek ×3, kv-ek, ah-ek"
        );
    }

    #[test]
    fn the_generated_items_are_the_eerste_kamers() {
        let items = generated();
        assert_eq!(items.len(), EERSTE_KAMER_COUNT);
        assert!(items.iter().all(|p| p.creator.as_deref() == Some(EERSTE_KAMER)));
        assert!(items.iter().all(|p| p.date <= p.available));
        assert_eq!(items[0].identifier, "kst-36600-A");
        assert!(items[1].identifier.starts_with("h-ek-20252026-1-"));
        assert_eq!(items[2].identifier, "ah-ek-20252026-1");
    }
}
