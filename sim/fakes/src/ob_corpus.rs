//! The Officiële Bekendmakingen fake's data: a few hundred publications across the
//! journals, generated from a fixed seed, with their renditions; a few Eerste Kamer items
//! ([`crate::ob_chamber`]); then the real publications of the corpus (`corpus/ob/`), each
//! described by what its own files say, and the real parliamentary records of
//! `corpus/ob-chamber/`.
//!
//! Invariants: generation reads no clock and no ambient randomness; publications keep
//! their generation order (the fake's relevance order), the real ones last; identifiers
//! are unique; a publication's own date (dagtekening) is never after its publication date;
//! one in ten generated publications is PDF-only and one in ten has an XML rendition that
//! is an empty template, spread over the journals, so tests find each kind by
//! [`Renditions`]; the first publication ([`LONG_PUBLICATION`]) has a long text, many
//! pages of it. A real publication's record holds only what its files say: its
//! `metadata.xml` where the corpus has one (title, types, creator, dates, organisation
//! type, dossier, subjects), else its rendition's own title; its journal and the parts of
//! its identifier (`gmb-2017-100002`: Gemeenteblad, 2017, number 100002) always.
//!
//! What this module does not do: model versions of a publication (always `1`), the
//! `odt` manifestation, or geographic markings.

use crate::real::{self, Element, RealFile};
use chrono::Datelike;

use crate::{day, days_after, mix64, pick};

/// Publications generated (the real ones follow them).
pub const PUBLICATION_COUNT: usize = 360;
/// The publication (by generation order) whose text is long: the first, `gmb-…-10000`.
pub const LONG_PUBLICATION: usize = 0;
/// Articles of the long publication's text (about 40,000 characters).
pub const LONG_ARTICLES: usize = 150;

pub use crate::ob_publication::{ObPublication, Renditions};

/// One journal: its name, identifier prefix, organisation type, organisations and kinds.
struct Journal {
    publication: &'static str,
    kind: &'static str,
    organization_type: &'static str,
    creators: &'static [&'static str],
    types: &'static [&'static str],
}

const JOURNALS: [Journal; 10] = [
    Journal {
        publication: "Gemeenteblad",
        kind: "gmb",
        organization_type: "gemeente",
        creators: &[
            "Utrecht",
            "Amsterdam",
            "'s-Gravenhage",
            "Zwolle",
            "Súdwest-Fryslân",
            "Den Helder",
        ],
        types: &[
            "Verordening",
            "Besluit",
            "Bekendmaking",
            "Omgevingsvergunning",
            "Beleidsregel",
        ],
    },
    Journal {
        publication: "Provinciaal blad",
        kind: "prb",
        organization_type: "provincie",
        creators: &["Provincie Utrecht", "Gelderland", "Noord-Holland"],
        types: &["Verordening", "Besluit", "Beleidsregel"],
    },
    Journal {
        publication: "Waterschapsblad",
        kind: "wsb",
        organization_type: "waterschap",
        creators: &["Hoogheemraadschap De Stichtse Rijnlanden", "Waterschap Rivierenland"],
        types: &["Verordening", "Besluit", "Peilbesluit"],
    },
    Journal {
        publication: "Blad gemeenschappelijke regeling",
        kind: "bgr",
        organization_type: "regionaal samenwerkingsorgaan",
        creators: &["Veiligheidsregio Utrecht", "Omgevingsdienst Regio Utrecht"],
        types: &["Besluit", "Begroting"],
    },
    Journal {
        publication: "Staatscourant",
        kind: "stcrt",
        organization_type: "ministerie",
        creators: &[
            "Ministerie van Infrastructuur en Waterstaat",
            "Ministerie van Binnenlandse Zaken en Koninkrijksrelaties",
            "Ministerie van Landbouw, Visserij, Voedselzekerheid en Natuur",
        ],
        types: &["Regeling", "Besluit", "Beleidsregel", "Bekendmaking"],
    },
    Journal {
        publication: "Staatsblad",
        kind: "stb",
        organization_type: "ministerie",
        creators: &["Ministerie van Justitie en Veiligheid", "Ministerie van Financiën"],
        types: &["Wet", "AMvB", "Koninklijk besluit"],
    },
    Journal {
        publication: "Tractatenblad",
        kind: "trb",
        organization_type: "ministerie",
        creators: &["Ministerie van Buitenlandse Zaken"],
        types: &["Verdrag"],
    },
    Journal {
        publication: "Kamerstuk",
        kind: "kst",
        organization_type: "staten generaal",
        creators: &["Tweede Kamer der Staten-Generaal"],
        types: &["Brief", "Motie", "Memorie van toelichting", "Amendement"],
    },
    Journal {
        publication: "Handelingen",
        kind: "h-tk",
        organization_type: "staten generaal",
        creators: &["Tweede Kamer der Staten-Generaal"],
        types: &["Handelingen"],
    },
    Journal {
        publication: "Kamervragen (Aanhangsel)",
        kind: "ah-tk",
        organization_type: "staten generaal",
        creators: &["Tweede Kamer der Staten-Generaal"],
        types: &["Antwoord schriftelijke vragen"],
    },
];

/// Topics: (title phrase, subject, a sentence of the body).
const TOPICS: [(&str, &str, &str); 8] = [
    (
        "parkeren",
        "verkeer",
        "Het parkeren van voertuigen op de openbare weg is alleen toegestaan op de aangewezen plaatsen.",
    ),
    (
        "omgevingsvisie",
        "ruimtelijke ordening",
        "De omgevingsvisie beschrijft de samenhang van het beleid voor de fysieke leefomgeving.",
    ),
    (
        "stikstof",
        "natuur en milieu",
        "De depositie van stikstof op kwetsbare natuur wordt de komende jaren teruggebracht.",
    ),
    (
        "afvalstoffenheffing",
        "belastingen",
        "De afvalstoffenheffing wordt geheven van de gebruiker van een perceel.",
    ),
    (
        "zonne-energie",
        "energie",
        "Zonne-energie op daken van bedrijfsgebouwen wordt met een subsidie ondersteund.",
    ),
    (
        "woningbouw",
        "wonen",
        "Voor de woningbouw in de binnenstad gelden aanvullende regels voor de hoogte.",
    ),
    (
        "subsidieregeling",
        "subsidies",
        "Een aanvraag voor een subsidie wordt ingediend voor de sluitingsdatum.",
    ),
    (
        "waterpeil",
        "water",
        "Het waterpeil in de polder wordt in de zomer op een hoger niveau gehouden.",
    ),
];

const SEED: u64 = 0x0B0B_2026;

/// The Officiële Bekendmakingen fake's data.
#[derive(Clone, Debug)]
pub struct ObCorpus {
    /// Every publication, in generation order.
    pub publications: Vec<ObPublication>,
}

impl ObCorpus {
    /// Generates the corpus (deterministic).
    pub fn generate() -> ObCorpus {
        let mut publications = Vec::with_capacity(PUBLICATION_COUNT);
        // 1 January 2024 onward, about three years.
        let first_day = day(2024, 1, 1);
        for i in 0..PUBLICATION_COUNT {
            let n = i as u64;
            let journal = &JOURNALS[i % JOURNALS.len()];
            let creator = journal.creators[pick(SEED, n * 7 + 1, journal.creators.len())];
            let document_type = journal.types[pick(SEED, n * 7 + 2, journal.types.len())];
            let (topic, subject, sentence) = TOPICS[pick(SEED, n * 7 + 3, TOPICS.len())];
            let published = days_after(first_day, mix64(SEED ^ n) % 1000);
            let available_on = days_after(published, mix64(SEED ^ (n << 8)) % 8);
            let ay = available_on.year();
            let date = published.format("%Y-%m-%d").to_string();
            let available = available_on.format("%Y-%m-%d").to_string();
            let number = 10_000 + i as u64;
            let (identifier, group, dossier, subnumber) = match journal.kind {
                "kst" => {
                    let dossier = [36600, 36410, 26100][pick(SEED, n * 7 + 4, 3)];
                    (
                        format!("kst-{dossier}-{}", i / 10 + 1),
                        dossier.to_string(),
                        Some(dossier.to_string()),
                        Some((i / 10 + 1).to_string()),
                    )
                }
                "h-tk" => (
                    format!("h-tk-20252026-{}-{}", i / 10 + 1, i % 7 + 1),
                    "20252026".to_owned(),
                    None,
                    None,
                ),
                "ah-tk" => (format!("ah-tk-20252026-{number}"), "20252026".to_owned(), None, None),
                kind => (format!("{kind}-{ay}-{number}"), ay.to_string(), None, None),
            };
            // Shifted by the tens, so every journal has each kind.
            let renditions = match (i + i / 10) % 10 {
                8 => Renditions::PdfOnly,
                9 => Renditions::EmptyTemplate,
                _ => Renditions::Full,
            };
            let title = format!("{document_type} {topic} {creator} {ay}");
            let mut paragraphs = if renditions == Renditions::Full {
                vec![
                    title.clone(),
                    format!("{creator} maakt bekend: {sentence}"),
                    format!("Artikel 1. Dit besluit over {topic} treedt in werking op {available}."),
                    format!("Kenmerk {identifier}."),
                ]
            } else {
                Vec::new()
            };
            if i == LONG_PUBLICATION {
                // A long regulation: many pages of text.
                for n in 2..=LONG_ARTICLES {
                    paragraphs.insert(
                        paragraphs.len() - 1,
                        format!(
                            "Artikel {n}. Het college kan voor {topic} nadere regels stellen over de aanvraag, de \
                             termijnen en de voorschriften; een ontheffing als bedoeld in artikel {} kan onder \
                             beperkingen worden verleend en wordt ingetrokken wanneer de voorschriften niet worden \
                             nageleefd.",
                            n - 1
                        ),
                    );
                }
            }
            publications.push(ObPublication {
                identifier,
                kind: journal.kind,
                group,
                title,
                document_type: Some(document_type.to_owned()),
                creator: Some(creator.to_owned()),
                organization_type: Some(journal.organization_type.to_owned()),
                publication: journal.publication,
                number: Some(number.to_string()),
                volume: Some(i64::from(ay)),
                dossier,
                subnumber,
                date: Some(date),
                available: Some(available),
                subjects: vec![subject.to_owned()],
                paragraphs,
                renditions,
            });
        }
        publications.extend(crate::ob_chamber::generated());
        publications.extend(
            real::ob()
                .iter()
                .filter(|f| !f.stem().contains(".metadata"))
                .map(real_publication),
        );
        publications.extend(crate::ob_chamber::real_items());
        ObCorpus { publications }
    }

    /// The publication with exactly this identifier.
    pub fn get(&self, identifier: &str) -> Option<&ObPublication> {
        self.publications.iter().find(|p| p.identifier == identifier)
    }
}

/// A real publication of the corpus, described by its own files (see the module's
/// invariants). The corpus's files all parse (a test in `real.rs` says so).
fn real_publication(file: &'static RealFile) -> ObPublication {
    let identifier = file.stem().to_owned();
    // The journal is the identifier's prefix, the longest that fits (`ah-tk`, not `h-tk`).
    let journal = JOURNALS
        .iter()
        .filter(|j| identifier.starts_with(&format!("{}-", j.kind)))
        .max_by_key(|j| j.kind.len())
        .unwrap_or_else(|| panic!("{}: a corpus publication of no known journal", file.path));
    let rest = &identifier[journal.kind.len() + 1..];
    let (group, tail) = rest.split_once('-').unwrap_or((rest, ""));
    let yearly = group.len() == 4 && group.bytes().all(|b| b.is_ascii_digit());
    let rendition = real::parse(file.bytes).unwrap_or_else(|e| panic!("{}: {e}", file.path));
    // metadata.xml: `<metadata name="…" scheme="…" content="…"/>`, in order.
    let metadata: Vec<(String, String, String)> = real::ob()
        .iter()
        .find(|f| f.stem() == format!("{identifier}.metadata"))
        .map(|f| {
            let doc = real::parse(f.bytes).unwrap_or_else(|e| panic!("{}: {e}", f.path));
            let mut all = Vec::new();
            doc.find_all("metadata", &mut all);
            all.iter()
                .filter_map(|m| {
                    let field = |n: &str| m.attribute(n).unwrap_or_default().to_owned();
                    m.attribute("name")
                        .map(|_| (field("name"), field("scheme"), field("content")))
                })
                .collect()
        })
        .unwrap_or_default();
    let values = |name: &str| -> Vec<String> {
        metadata
            .iter()
            .filter(|(n, _, _)| n == name)
            .map(|(_, _, c)| c.clone())
            .collect()
    };
    let one = |name: &str| values(name).into_iter().next();
    ObPublication {
        title: one("DC.title").unwrap_or_else(|| own_title(&rendition)),
        // The kind of document, not the generic "officiële publicatie".
        document_type: metadata
            .iter()
            .filter(|(n, scheme, _)| n == "DC.type" && scheme != "OVERHEID.Informatietype")
            .map(|(_, _, c)| c.clone())
            .next_back(),
        creator: one("DC.creator"),
        organization_type: one("OVERHEID.organisationType"),
        publication: journal.publication,
        number: yearly.then(|| tail.to_owned()),
        volume: yearly.then(|| group.parse().ok()).flatten(),
        dossier: one("OVERHEIDop.dossiernummer"),
        subnumber: one("OVERHEIDop.ondernummer"),
        date: one("DCTERMS.issued"),
        available: one("DCTERMS.available"),
        subjects: values("OVERHEID.category"),
        paragraphs: vec![rendition.text_without(&["metadata"], " ")],
        renditions: Renditions::Real,
        kind: journal.kind,
        group: group.to_owned(),
        identifier,
    }
}

/// A rendition's own title: the first `intitule` or `titel` of its publication element (the
/// root's child after `metadata` and the journal's `kop`).
fn own_title(rendition: &Element) -> String {
    fn first(e: &Element) -> Option<&Element> {
        if matches!(e.name.as_str(), "intitule" | "titel") {
            return Some(e);
        }
        e.elements().find_map(first)
    }
    rendition
        .elements()
        .find(|e| !matches!(e.name.as_str(), "metadata" | "kop"))
        .and_then(first)
        .map(|t| t.text_without(&[], ""))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_unique_and_dates_in_order() {
        let c = ObCorpus::generate();
        let real = real::ob().iter().filter(|f| !f.stem().contains(".metadata")).count();
        let chamber = crate::ob_chamber::EERSTE_KAMER_COUNT + crate::ob_chamber::real_items().len();
        assert_eq!(c.publications.len(), PUBLICATION_COUNT + real + chamber);
        let ids: std::collections::BTreeSet<&str> = c.publications.iter().map(|p| p.identifier.as_str()).collect();
        assert_eq!(ids.len(), c.publications.len(), "unique identifiers");
        assert!(c.publications.iter().all(|p| p.date <= p.available));
        for kind in [
            Renditions::Full,
            Renditions::PdfOnly,
            Renditions::EmptyTemplate,
            Renditions::Real,
            Renditions::RealRecord,
        ] {
            assert!(c.publications.iter().any(|p| p.renditions == kind), "{kind:?}");
        }
        assert_eq!(
            c.publications[0].identifier,
            format!("gmb-{}-10000", c.publications[0].volume.unwrap())
        );
        assert!(
            c.publications[..PUBLICATION_COUNT]
                .iter()
                .all(|p| p.renditions != Renditions::Real)
        );
    }

    #[test]
    fn a_real_publication_says_what_its_files_say() {
        let c = ObCorpus::generate();
        let kst = c.get("kst-32545-143").unwrap();
        assert_eq!(
            (
                kst.kind,
                kst.group.as_str(),
                kst.publication,
                kst.document_type.as_deref()
            ),
            ("kst", "32545", "Kamerstuk", Some("Kamerstuk"))
        );
        assert!(
            kst.title
                .starts_with("Wet- en regelgeving financiële markten; Motie; Motie van de leden Inge van Dijk")
        );
        assert_eq!(
            (kst.date.as_deref(), kst.available.as_deref(), kst.creator.as_deref()),
            (
                Some("2021-07-06"),
                Some("2021-07-07"),
                Some("Tweede Kamer der Staten-Generaal")
            )
        );
        assert_eq!(
            (kst.dossier.as_deref(), kst.subnumber.as_deref(), kst.number.as_deref()),
            (Some("32545"), Some("143"), None)
        );
        assert_eq!(kst.manifestations(), ["metadata", "metadataowms", "xml"]);
        let gmb = c.get("gmb-2017-100002").unwrap();
        assert_eq!(
            gmb.title,
            "Ingediende aanvraag omgevingsvergunning, Zuiderweg 21 Midwolda"
        );
        assert_eq!(
            (gmb.publication, gmb.volume, gmb.number.as_deref()),
            ("Gemeenteblad", Some(2017), Some("100002"))
        );
        assert_eq!(
            (gmb.creator.clone(), gmb.date.clone(), gmb.available.clone()),
            (None, None, None),
            "unknown, not made up"
        );
        assert_eq!(gmb.manifestations(), ["xml"]);
        assert!(
            gmb.paragraphs[0].contains("kappen berk en dennenboom"),
            "{:?}",
            gmb.paragraphs
        );
        assert!(!gmb.paragraphs[0].contains("externMetadataRecord"));
        assert_eq!(
            c.get("stb-2018-84").unwrap().title,
            "Besluit van 9 maart 2018, houdende vaststelling van de bestanddelen van de beeldenaar van de munten van vijf en tien euro die worden uitgegeven ter viering van Leeuwarden-Fryslân als culturele hoofdstad van Europa"
        );
        assert_eq!(c.get("ah-tk-20202021-3235").unwrap().group, "20202021");
        for p in c.publications.iter().filter(|p| p.renditions == Renditions::Real) {
            assert!(!p.title.is_empty(), "{}", p.identifier);
            assert_eq!(
                p.real_file("xml").map(<[u8]>::len),
                real::ob()
                    .iter()
                    .find(|f| f.stem() == p.identifier)
                    .map(|f| f.bytes.len())
            );
        }
    }
}
