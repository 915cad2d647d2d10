//! The Officiële Bekendmakingen fake's data: a few hundred publications across the
//! journals, generated from a fixed seed, with their renditions.
//!
//! Invariants: generation reads no clock and no ambient randomness; publications keep
//! their generation order (the fake's relevance order); identifiers are unique; a
//! publication's own date (dagtekening) is never after its publication date; one in ten
//! publications is PDF-only and one in ten has an XML rendition that is an empty
//! template, spread over the journals, so tests find each kind by [`Renditions`]; the
//! first publication ([`LONG_PUBLICATION`]) has a long text, many pages of it.
//!
//! What this module does not do: model versions of a publication (always `1`), the
//! `odt` and `metadata` manifestations, or geographic markings.

use crate::{civil_from_days, days_from_civil, mix64, pick};

/// Publications generated.
pub const PUBLICATION_COUNT: usize = 360;
/// The publication (by generation order) whose text is long: the first, `gmb-…-10000`.
pub const LONG_PUBLICATION: usize = 0;
/// Articles of the long publication's text (about 40,000 characters).
pub const LONG_ARTICLES: usize = 150;

/// Which renditions a publication has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Renditions {
    /// XML, HTML and PDF.
    Full,
    /// Only a PDF (older items, attachments).
    PdfOnly,
    /// XML (an empty template: metadata, no text), HTML and PDF.
    EmptyTemplate,
}

/// One publication.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObPublication {
    /// `dcterms:identifier`, e.g. `gmb-2026-10004`.
    pub identifier: String,
    /// The identifier's prefix (`gmb`, `stcrt`, `kst`, …): the `{type}` of its URLs.
    pub kind: &'static str,
    /// The `{group}` of its URLs: the year, or the dossier.
    pub group: String,
    /// `dcterms:title`.
    pub title: String,
    /// `dcterms:type`.
    pub document_type: &'static str,
    /// `dcterms:creator`.
    pub creator: &'static str,
    /// `tpmeta/organisatietype`.
    pub organization_type: &'static str,
    /// `tpmeta/publicatienaam`.
    pub publication: &'static str,
    /// `tpmeta/publicatienummer`.
    pub number: String,
    /// `tpmeta/jaargang`.
    pub volume: i64,
    /// `tpmeta/dossiernummer` (parliamentary papers).
    pub dossier: Option<String>,
    /// `tpmeta/ondernummer`.
    pub subnumber: Option<String>,
    /// `dcterms:date` (dagtekening), `YYYY-MM-DD`.
    pub date: String,
    /// `dcterms:available` (publicatiedatum), `YYYY-MM-DD`.
    pub available: String,
    /// `dcterms:subject`.
    pub subjects: Vec<&'static str>,
    /// The body's paragraphs (empty for an empty template).
    pub paragraphs: Vec<String>,
    /// Its renditions.
    pub renditions: Renditions,
}

impl ObPublication {
    /// The path of rendition `manifestation` under the fake's root:
    /// `/frbr/officielepublicaties/{type}/{group}/{id}/1/{manifestation}/{id}.{ext}`.
    pub fn rendition_path(&self, manifestation: &str) -> String {
        let ext = manifestation;
        format!(
            "/frbr/officielepublicaties/{}/{}/{}/1/{manifestation}/{}.{ext}",
            self.kind, self.group, self.identifier, self.identifier
        )
    }

    /// The manifestations it has, in the order the record lists them.
    pub fn manifestations(&self) -> &'static [&'static str] {
        match self.renditions {
            Renditions::PdfOnly => &["pdf"],
            Renditions::Full | Renditions::EmptyTemplate => &["html", "pdf", "xml"],
        }
    }

    /// The text a reader should get from the XML rendition: the paragraphs, a blank
    /// line between them (`None` for an empty template or a PDF-only item).
    pub fn expected_text(&self) -> Option<String> {
        (self.renditions == Renditions::Full).then(|| self.paragraphs.join("\n\n"))
    }
}

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
        let first_day = days_from_civil(2024, 1, 1);
        for i in 0..PUBLICATION_COUNT {
            let n = i as u64;
            let journal = &JOURNALS[i % JOURNALS.len()];
            let creator = journal.creators[pick(SEED, n * 7 + 1, journal.creators.len())];
            let document_type = journal.types[pick(SEED, n * 7 + 2, journal.types.len())];
            let (topic, subject, sentence) = TOPICS[pick(SEED, n * 7 + 3, TOPICS.len())];
            let day = first_day + (mix64(SEED ^ n) % 1000) as i64;
            let lag = (mix64(SEED ^ (n << 8)) % 8) as i64;
            let (y, m, d) = civil_from_days(day);
            let (ay, am, ad) = civil_from_days(day + lag);
            let date = format!("{y:04}-{m:02}-{d:02}");
            let available = format!("{ay:04}-{am:02}-{ad:02}");
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
                document_type,
                creator,
                organization_type: journal.organization_type,
                publication: journal.publication,
                number: number.to_string(),
                volume: ay,
                dossier,
                subnumber,
                date,
                available,
                subjects: vec![subject],
                paragraphs,
                renditions,
            });
        }
        ObCorpus { publications }
    }

    /// The publication with exactly this identifier.
    pub fn get(&self, identifier: &str) -> Option<&ObPublication> {
        self.publications.iter().find(|p| p.identifier == identifier)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn identifiers_are_unique_and_dates_in_order() {
        let c = ObCorpus::generate();
        assert_eq!(c.publications.len(), PUBLICATION_COUNT);
        let ids: std::collections::BTreeSet<&str> = c.publications.iter().map(|p| p.identifier.as_str()).collect();
        assert_eq!(ids.len(), PUBLICATION_COUNT, "unique identifiers");
        assert!(c.publications.iter().all(|p| p.date <= p.available));
        for kind in [Renditions::Full, Renditions::PdfOnly, Renditions::EmptyTemplate] {
            assert!(c.publications.iter().any(|p| p.renditions == kind), "{kind:?}");
        }
        assert_eq!(
            c.publications[0].identifier,
            format!("gmb-{}-10000", c.publications[0].volume)
        );
    }
}
