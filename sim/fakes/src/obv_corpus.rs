//! The OpenBesluitvorming fake's data: 331 sources and a few thousand documents,
//! meetings and motions, generated from a fixed seed.
//!
//! Invariants: generation reads no clock and no ambient randomness, so every run and
//! every test sees the same corpus; entities are stored in entity-id order, and every
//! answer the fake gives is derived from this data alone.
//!
//! What this module does not do: speak HTTP (see `obv.rs`) or imitate Recordings —
//! a search restricted to `Recording` finds nothing.

use std::collections::BTreeMap;

use chrono::{Datelike, NaiveDate};

use crate::{day, days_after, pick};

/// Twelve provinces, as the real source list has them.
const PROVINCES: [&str; 12] = [
    "Groningen",
    "Fryslân",
    "Drenthe",
    "Overijssel",
    "Flevoland",
    "Gelderland",
    "Utrecht",
    "Noord-Holland",
    "Zuid-Holland",
    "Zeeland",
    "Noord-Brabant",
    "Limburg",
];

/// Twenty-one water boards.
const WATER_BOARDS: [&str; 21] = [
    "Wetterskip Fryslân",
    "Noorderzijlvest",
    "Hunze en Aa's",
    "Drents Overijsselse Delta",
    "Vechtstromen",
    "Vallei en Veluwe",
    "Rijn en IJssel",
    "Zuiderzeeland",
    "Hollands Noorderkwartier",
    "Amstel Gooi en Vecht",
    "De Stichtse Rijnlanden",
    "Rijnland",
    "Delfland",
    "Schieland en de Krimpenerwaard",
    "Hollandse Delta",
    "Rivierenland",
    "Scheldestromen",
    "Brabantse Delta",
    "De Dommel",
    "Aa en Maas",
    "Limburg",
];

/// Real municipality names; the rest of the 298 are composed from [`PREFIXES`] and [`SUFFIXES`].
const MUNICIPALITIES: [&str; 64] = [
    "Amsterdam",
    "Rotterdam",
    "Utrecht",
    "Eindhoven",
    "Groningen",
    "Tilburg",
    "Almere",
    "Breda",
    "Nijmegen",
    "Apeldoorn",
    "Haarlem",
    "Arnhem",
    "Enschede",
    "Amersfoort",
    "Zaanstad",
    "Haarlemmermeer",
    "Zwolle",
    "Leiden",
    "Maastricht",
    "Dordrecht",
    "Zoetermeer",
    "Ede",
    "Leeuwarden",
    "Alphen aan den Rijn",
    "Alkmaar",
    "Emmen",
    "Westland",
    "Delft",
    "Venlo",
    "Deventer",
    "Sittard-Geleen",
    "Helmond",
    "Oss",
    "Amstelveen",
    "Hilversum",
    "Súdwest-Fryslân",
    "Heerlen",
    "Hengelo",
    "Purmerend",
    "Schiedam",
    "Lelystad",
    "Roosendaal",
    "Leidschendam-Voorburg",
    "Gouda",
    "Hoorn",
    "Vlaardingen",
    "Almelo",
    "Assen",
    "Veenendaal",
    "Capelle aan den IJssel",
    "Katwijk",
    "Zeist",
    "Nieuwegein",
    "Soest",
    "Heemskerk",
    "Bergen op Zoom",
    "Roermond",
    "Meppel",
    "Texel",
    "Vlieland",
    "Baarn",
    "Bunnik",
    "Woerden",
    "Tiel",
];

const PREFIXES: [&str; 12] = [
    "Ooster", "Wester", "Noord", "Zuid", "Nieuw", "Oud", "Hoog", "Laag", "Groot", "Klein", "Sint-Jan", "Berg",
];
const SUFFIXES: [&str; 24] = [
    "veen", "wolde", "dam", "dijk", "horst", "broek", "hoven", "wijk", "zijl", "meer", "hout", "berg", "burg", "hem",
    "lo", "rode", "sloot", "gein", "haven", "kerk", "beek", "donk", "zand", "heuvel",
];

const SUPPLIERS: [(&str, &str); 5] = [
    ("notubiz", "Notubiz"),
    ("ibabs", "iBabs"),
    ("parlaeus", "Parlaeus"),
    ("gemeenteoplossingen", "GemeenteOplossingen"),
    ("go", "GO"),
];

/// Subjects: (search word, phrase used in titles and summaries).
const TOPICS: [(&str, &str); 16] = [
    ("stikstof", "stikstof en natuurherstel"),
    ("woningbouw", "woningbouw in de kernen"),
    ("jeugdzorg", "jeugdzorg en wachtlijsten"),
    ("begroting", "begroting en voorjaarsnota"),
    ("klimaatadaptatie", "klimaatadaptatie en hittestress"),
    ("fietspad", "een nieuw fietspad langs het kanaal"),
    ("zonnepark", "het zonnepark op de voormalige stortplaats"),
    ("windturbines", "windturbines bij het bedrijventerrein"),
    ("armoedebeleid", "armoedebeleid en minimaregelingen"),
    ("parkeerbeleid", "parkeerbeleid in het centrum"),
    ("afvalinzameling", "afvalinzameling en diftar"),
    (
        "onderwijshuisvesting",
        "onderwijshuisvesting voor het voortgezet onderwijs",
    ),
    ("dijkversterking", "dijkversterking langs de rivier"),
    ("waterkwaliteit", "waterkwaliteit in stedelijk gebied"),
    ("omgevingsvisie", "de omgevingsvisie en het omgevingsplan"),
    ("participatie", "participatie van inwoners"),
];

const DOC_KINDS: [&str; 6] = [
    "Raadsvoorstel",
    "Raadsinformatiebrief",
    "Besluitenlijst",
    "Amendement",
    "Collegebesluit",
    "Notitie",
];
const STAGES: [&str; 6] = [
    "vaststelling",
    "evaluatie",
    "kaderstelling",
    "uitvoeringsprogramma",
    "tussenrapportage",
    "krediet",
];
const MONTHS_NL: [&str; 12] = [
    "januari",
    "februari",
    "maart",
    "april",
    "mei",
    "juni",
    "juli",
    "augustus",
    "september",
    "oktober",
    "november",
    "december",
];
const PARTIES: [&str; 8] = [
    "VVD",
    "CDA",
    "PvdA",
    "GroenLinks",
    "D66",
    "SP",
    "ChristenUnie",
    "lokale partij",
];

/// Every n-th document is long (about 200 KB of markdown), for paging tests.
pub const LONG_DOCUMENT_EVERY: usize = 97;
/// Size of a long document's markdown text, at least.
pub const LONG_DOCUMENT_BYTES: usize = 200 * 1024;

/// The first day documents are dated (2023-01-01) and the span in days.
const FIRST_DAY: (i32, u32, u32) = (2023, 1, 1);
const SPAN_DAYS: u64 = 1339;

/// One source (organisation) as `/api/sources` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObvSource {
    /// The key used as `organization` in searches, e.g. `gemeente-soest`.
    pub key: String,
    /// The label shown to people, e.g. `Gemeente Soest`.
    pub label: String,
    /// The supplier's id, e.g. `notubiz`.
    pub supplier: &'static str,
    /// `municipality`, `province` or `water_board`.
    pub organization_type: &'static str,
    /// Dutch organisation type used inside entity ids: `gemeente`, `provincie`, `waterschap`.
    pub org_type_nl: &'static str,
    /// The slug used inside entity ids, e.g. `soest`.
    pub slug: String,
    /// Whether the platform imports this source (unimplemented sources have no entities).
    pub implemented: bool,
    /// The source's import state in `/api/status`.
    pub state: &'static str,
    /// CBS-style code, e.g. `GM0342`.
    pub cbs_id: String,
}

/// One searchable entity: a `Document`, `Meeting` or `Motion`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ObvEntity {
    /// Composite id `type:supplier:orgtype:org:sourceid`.
    pub entity_id: String,
    /// `Document`, `Meeting` or `Motion`.
    pub entity_type: &'static str,
    /// Index into [`ObvCorpus::sources`].
    pub source: usize,
    /// Title as shown in hits.
    pub title: String,
    /// Plain summary.
    pub summary: String,
    /// `YYYY-MM-DD hh:mm:ss` (UTC).
    pub sort_date: String,
    /// Dutch date text, e.g. `12 maart 2025`.
    pub date_nl: String,
    /// Pages of the original file (documents; 0 otherwise).
    pub page_count: u32,
    /// The meeting a document or motion belongs to.
    pub meeting_id: Option<String>,
    /// Documents and motions of a meeting (empty otherwise), in agenda order.
    pub attachments: Vec<String>,
    /// Seed of this entity's generated text.
    pub seed: u64,
    /// True for the long (about 200 KB) documents.
    pub long: bool,
}

impl ObvEntity {
    /// Lower-case words of title and summary: what a query word is matched against.
    pub fn searchable_text(&self) -> String {
        normalise(&format!("{} {}", self.title, self.summary))
    }

    /// The date part (`YYYY-MM-DD`) of [`ObvEntity::sort_date`].
    pub fn day(&self) -> &str {
        &self.sort_date[..10]
    }

    /// The full markdown text of a document (generated on demand; deterministic).
    pub fn markdown_text(&self, corpus: &ObvCorpus) -> String {
        let source = &corpus.sources[self.source];
        let mut text = format!(
            "# {}\n\n*{}* — {}\n\n{}\n\n",
            self.title, source.label, self.date_nl, self.summary
        );
        let target = if self.long {
            LONG_DOCUMENT_BYTES
        } else {
            2_000 + pick(self.seed, 1, 6_000)
        };
        let mut paragraph = 0u64;
        while text.len() < target {
            paragraph += 1;
            let (_, topic) = TOPICS[pick(self.seed, 100 + paragraph, TOPICS.len())];
            let stage = STAGES[pick(self.seed, 200 + paragraph, STAGES.len())];
            if paragraph % 7 == 1 {
                text.push_str(&format!("## {paragraph}. {}\n\n", capitalise(stage)));
            }
            text.push_str(&format!(
                "Het college informeert de raad over {topic}. In deze fase ({stage}) zijn de kosten \
                 geraamd op € {} duizend; de {} vraagt om een nadere toelichting bij paragraaf {paragraph}. \
                 Inwoners konden tot en met {} reageren.\n\n",
                50 + pick(self.seed, 300 + paragraph, 950),
                PARTIES[pick(self.seed, 400 + paragraph, PARTIES.len())],
                self.date_nl
            ));
        }
        text
    }
}

/// The fake's whole data set.
#[derive(Debug)]
pub struct ObvCorpus {
    sources: Vec<ObvSource>,
    entities: Vec<ObvEntity>,
    by_id: BTreeMap<String, usize>,
    by_key: BTreeMap<String, usize>,
}

impl ObvCorpus {
    /// All 331 sources in `/api/sources` order (provinces, water boards, municipalities).
    pub fn sources(&self) -> &[ObvSource] {
        &self.sources
    }

    /// All entities in entity-id order.
    pub fn entities(&self) -> &[ObvEntity] {
        &self.entities
    }

    /// The entity with this id.
    pub fn entity(&self, entity_id: &str) -> Option<&ObvEntity> {
        self.by_id.get(entity_id).map(|&i| &self.entities[i])
    }

    /// The source with this key (case-sensitive, as the platform has it).
    pub fn source_by_key(&self, key: &str) -> Option<(usize, &ObvSource)> {
        self.by_key.get(key).map(|&i| (i, &self.sources[i]))
    }

    /// The source an entity belongs to.
    pub fn source_of(&self, entity: &ObvEntity) -> &ObvSource {
        &self.sources[entity.source]
    }

    /// Generates the corpus (deterministic; call through `obv_corpus()` to do it once).
    pub(crate) fn generate() -> ObvCorpus {
        let sources = generate_sources();
        let first_day = day(FIRST_DAY.0, FIRST_DAY.1, FIRST_DAY.2);
        let mut entities = Vec::new();
        for (si, source) in sources.iter().enumerate() {
            if !source.implemented {
                continue;
            }
            let prefix = format!("{}:{}:{}", source.supplier, source.org_type_nl, source.slug);
            let mut docs = documents(si, source, &prefix, first_day, entities.len());
            entities.extend(meetings(si, source, &prefix, first_day, &mut docs));
            entities.extend(docs);
        }
        entities.sort_by(|a, b| a.entity_id.cmp(&b.entity_id));
        let by_id = entities
            .iter()
            .enumerate()
            .map(|(i, e)| (e.entity_id.clone(), i))
            .collect();
        let by_key = sources.iter().enumerate().map(|(i, s)| (s.key.clone(), i)).collect();
        ObvCorpus {
            sources,
            entities,
            by_id,
            by_key,
        }
    }

    /// The motion's vote outcome: (result, in favour, against).
    pub fn motion_outcome(&self, motion: &ObvEntity) -> (&'static str, u32, u32) {
        let in_favour = 5 + pick(motion.seed, 10, 25) as u32;
        let against = 5 + pick(motion.seed, 11, 25) as u32;
        let result = match pick(motion.seed, 12, 10) {
            0 => "ingetrokken",
            1 => "aangehouden",
            _ if in_favour > against => "aangenomen",
            _ => "verworpen",
        };
        (result, in_favour, against)
    }
}

/// Source `si`'s documents (ids under `prefix`), drawn from its seed; `before` entities
/// of earlier sources come first, which decides the long documents.
fn documents(si: usize, source: &ObvSource, prefix: &str, first_day: NaiveDate, before: usize) -> Vec<ObvEntity> {
    let s = si as u64;
    let doc_count = 6 + pick(s, 1, 10);
    let mut docs = Vec::with_capacity(doc_count);
    for d in 0..doc_count {
        let seed = s * 1_000 + d as u64;
        let (word, topic) = TOPICS[pick(seed, 2, TOPICS.len())];
        let (_, other) = TOPICS[pick(seed, 3, TOPICS.len())];
        let kind = DOC_KINDS[pick(seed, 4, DOC_KINDS.len())];
        let stage = STAGES[pick(seed, 5, STAGES.len())];
        let day = days_after(first_day, pick(seed, 6, SPAN_DAYS as usize) as u64);
        let global = before + docs.len();
        let long = global.is_multiple_of(LONG_DOCUMENT_EVERY);
        docs.push(ObvEntity {
            entity_id: format!("document:{prefix}:{}", 10_000 + seed),
            entity_type: "Document",
            source: si,
            title: format!("{kind} {word}: {stage}"),
            summary: format!("{kind} van {} over {topic}, met aandacht voor {other}.", source.label),
            sort_date: format!("{} {:02}:00:00", iso_day(day), 8 + pick(seed, 7, 12)),
            date_nl: dutch_day(day),
            page_count: if long { 68 } else { 1 + pick(seed, 8, 30) as u32 },
            meeting_id: None,
            attachments: Vec::new(),
            seed,
            long,
        });
    }
    docs
}

/// Source `si`'s two meetings, each with a motion, in that order; each meeting discusses
/// every other one of `docs` (which then name it as their meeting) and its motion.
fn meetings(
    si: usize,
    source: &ObvSource,
    prefix: &str,
    first_day: NaiveDate,
    docs: &mut [ObvEntity],
) -> Vec<ObvEntity> {
    let s = si as u64;
    let mut entities = Vec::new();
    for m in 0..2u64 {
        let seed = s * 1_000 + 500 + m;
        let day = days_after(first_day, pick(seed, 6, SPAN_DAYS as usize) as u64);
        let meeting_id = format!("meeting:{prefix}:{}", 50_000 + seed);
        let motion_id = format!("motion:{prefix}:{}", 70_000 + seed);
        let (word, topic) = TOPICS[pick(seed, 2, TOPICS.len())];
        let body = match source.org_type_nl {
            "gemeente" => "Raadsvergadering",
            "provincie" => "Statenvergadering",
            _ => "Vergadering algemeen bestuur",
        };
        // Every meeting discusses the source's documents with index m, m+2, m+4, ...
        let mut attachments: Vec<String> = docs
            .iter_mut()
            .skip(m as usize)
            .step_by(2)
            .map(|doc| {
                doc.meeting_id = Some(meeting_id.clone());
                doc.entity_id.clone()
            })
            .collect();
        attachments.push(motion_id.clone());
        entities.push(ObvEntity {
            entity_id: meeting_id.clone(),
            entity_type: "Meeting",
            source: si,
            title: format!("{body} {}", dutch_day(day)),
            summary: format!("Vergadering van {} over onder meer {topic}.", source.label),
            sort_date: format!("{} 19:30:00", iso_day(day)),
            date_nl: dutch_day(day),
            page_count: 0,
            meeting_id: None,
            attachments,
            seed,
            long: false,
        });
        let party = PARTIES[pick(seed, 9, PARTIES.len())];
        entities.push(ObvEntity {
            entity_id: motion_id,
            entity_type: "Motion",
            source: si,
            title: format!("Motie {word} ({party})"),
            summary: format!("Motie van de fractie {party} over {topic}."),
            sort_date: format!("{} 22:15:00", iso_day(day)),
            date_nl: dutch_day(day),
            page_count: 1,
            meeting_id: Some(meeting_id),
            attachments: Vec::new(),
            seed,
            long: false,
        });
    }
    entities
}

fn generate_sources() -> Vec<ObvSource> {
    let mut names: Vec<(&'static str, &'static str, String)> = Vec::with_capacity(331);
    for p in PROVINCES {
        names.push(("province", "provincie", p.to_owned()));
    }
    for w in WATER_BOARDS {
        names.push(("water_board", "waterschap", w.to_owned()));
    }
    let mut municipalities: Vec<String> = MUNICIPALITIES.iter().map(|m| (*m).to_owned()).collect();
    'outer: for suffix in SUFFIXES {
        for prefix in PREFIXES {
            if municipalities.len() == 298 {
                break 'outer;
            }
            let name = format!("{prefix}{suffix}");
            if !municipalities.contains(&name) {
                municipalities.push(name);
            }
        }
    }
    for m in municipalities {
        names.push(("municipality", "gemeente", m));
    }
    names
        .into_iter()
        .enumerate()
        .map(|(i, (organization_type, org_type_nl, name))| {
            let slug = slugify(&name);
            let supplier = SUPPLIERS[pick(7, i as u64, SUPPLIERS.len())].0;
            let implemented = i % 23 != 11;
            let state = if !implemented {
                "not_implemented"
            } else if supplier == "ibabs" {
                // As in the platform's own example: iBabs refuses the importer's host.
                "failing"
            } else if i % 19 == 4 {
                "stale"
            } else {
                "ok"
            };
            let label = match organization_type {
                "province" => format!("Provincie {name}"),
                "water_board" if name.starts_with("Wetterskip") => name.clone(),
                "water_board" => format!("Waterschap {name}"),
                _ => format!("Gemeente {name}"),
            };
            let cbs_prefix = match organization_type {
                "province" => "PV",
                "water_board" => "WS",
                _ => "GM",
            };
            ObvSource {
                key: format!("{org_type_nl}-{slug}"),
                label,
                supplier,
                organization_type,
                org_type_nl,
                slug,
                implemented,
                state,
                cbs_id: format!("{cbs_prefix}{:04}", 100 + i),
            }
        })
        .collect()
}

/// The suppliers in `/api/status` order: (id, label).
pub fn suppliers() -> &'static [(&'static str, &'static str)] {
    &SUPPLIERS
}

/// Lower-case, punctuation as spaces, single spaces: the form queries are matched in.
pub fn normalise(text: &str) -> String {
    let mapped: String = text
        .chars()
        .map(|c| {
            if c.is_alphanumeric() {
                c.to_lowercase().next().unwrap_or(c)
            } else {
                ' '
            }
        })
        .collect();
    mapped.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn slugify(name: &str) -> String {
    let folded: String = name
        .chars()
        .map(|c| match c {
            'â' | 'á' => 'a',
            'ú' => 'u',
            c if c.is_ascii_alphanumeric() => c.to_ascii_lowercase(),
            _ => ' ',
        })
        .collect();
    folded.split_whitespace().collect::<Vec<_>>().join("-")
}

fn capitalise(word: &str) -> String {
    let mut chars = word.chars();
    chars
        .next()
        .map(|first| first.to_uppercase().chain(chars).collect())
        .unwrap_or_default()
}

fn iso_day(day: NaiveDate) -> String {
    day.format("%Y-%m-%d").to_string()
}

fn dutch_day(day: NaiveDate) -> String {
    format!("{} {} {}", day.day(), MONTHS_NL[day.month0() as usize], day.year())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn corpus_has_331_unique_sources_and_thousands_of_entities() {
        let c = ObvCorpus::generate();
        assert_eq!(c.sources().len(), 331);
        assert_eq!(c.by_key.len(), 331, "source keys are unique");
        assert!(c.entities().len() > 3_000, "{}", c.entities().len());
        assert_eq!(c.by_id.len(), c.entities().len(), "entity ids are unique");
        assert!(c.sources().iter().any(|s| !s.implemented));
        assert_eq!(c.source_by_key("gemeente-soest").unwrap().1.label, "Gemeente Soest");
    }

    #[test]
    fn generation_is_deterministic_and_some_documents_are_long() {
        let (a, b) = (ObvCorpus::generate(), ObvCorpus::generate());
        assert_eq!(a.entities(), b.entities());
        let long = a.entities().iter().find(|e| e.long).unwrap();
        let text = long.markdown_text(&a);
        assert!(text.len() >= LONG_DOCUMENT_BYTES);
        assert_eq!(text, long.markdown_text(&b));
    }

    #[test]
    fn normalise_strips_punctuation_and_case() {
        assert_eq!(normalise("Motie: Stikstof, (VVD)!"), "motie stikstof vvd");
    }
}
