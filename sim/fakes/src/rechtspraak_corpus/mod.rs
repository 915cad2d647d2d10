//! The Rechtspraak fake's data: the value lists (about two hundred courts, most of them
//! ended, historic identifiers in the psi form with spaces; nested areas of law; kinds of
//! procedure) and a corpus of rulings generated from a fixed seed, with the XML the real
//! service answers for each.
//!
//! Shape of the corpus (what tests rely on):
//! - [`BUSY_DAY`] has [`BUSY_DAY_RULINGS`] rulings (more than one page of 1000);
//! - [`FOOTNOTES_ECLI`] is a Hoge Raad judgment with footnotes, a table, lists, a quote,
//!   an image and an element the reader does not know; [`METADATA_ONLY_ECLI`] has no text;
//!   [`LONG_ECLI`], the advocate general's conclusie to it, is long (about 45,000
//!   characters: many pages of a ruling's text);
//! - courts tag every ruling with a top-level area, and only some also with a sub-area
//!   (the platform's quirk: a sub-area filter misses most rulings);
//! - some entries are withdrawn (`deleted="doc"` or `deleted="ecli"`), some rulings have
//!   no text, a few replace an old LJN; Hoge Raad judgments come with the advocate
//!   general's conclusie, related both ways.

use std::collections::HashMap;
use std::fmt::Write as _;

use chrono::{Days, NaiveDate};

use crate::{day, days_after, parse_date, pick};

/// A day with more rulings than one page holds.
pub const BUSY_DAY: &str = "2026-11-03";
/// Rulings on [`BUSY_DAY`].
pub const BUSY_DAY_RULINGS: usize = 1_200;
/// Rulings on other days (before the conclusies that come with Hoge Raad judgments).
pub const OTHER_RULINGS: usize = 1_400;
/// A judgment with footnotes, a table and the rest of the element vocabulary.
pub const FOOTNOTES_ECLI: &str = "ECLI:NL:HR:2026:1500";
/// A ruling published without a text.
pub const METADATA_ONLY_ECLI: &str = "ECLI:NL:RBAMS:2026:9999";
/// A long conclusie (many pages of text), the one [`FOOTNOTES_ECLI`] relates to.
pub const LONG_ECLI: &str = "ECLI:NL:PHR:2026:400";
/// Numbered paragraphs of [`LONG_ECLI`]'s text.
pub const LONG_PARAGRAPHS: usize = 120;

const OWMS: &str = "http://standaarden.overheid.nl/owms/terms/";
const PSI: &str = "http://psi.rechtspraak.nl/";
const AREA: &str = "http://psi.rechtspraak.nl/rechtsgebied#";
const PROCEDURE: &str = "http://psi.rechtspraak.nl/procedure#";

/// A court of the Instanties list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RsCourt {
    /// Its identifier (trimmed; the XML holds it with whitespace around).
    pub identifier: String,
    /// Its name.
    pub name: String,
    /// Its abbreviation (the ECLI court code for courts that publish).
    pub abbreviation: String,
    /// Its kind.
    pub kind: &'static str,
    /// First day.
    pub begin: &'static str,
    /// Last day, for ended courts.
    pub end: Option<&'static str>,
}

/// An area of law.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RsArea {
    /// Its identifier.
    pub identifier: String,
    /// Its name.
    pub name: String,
    /// The index of its parent area.
    pub parent: Option<usize>,
}

/// A kind of procedure.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RsProcedure {
    /// Its identifier.
    pub identifier: String,
    /// Its name.
    pub name: String,
}

/// A formal relation.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RsRelation {
    /// The other ECLI.
    pub ecli: String,
    /// `psi:type`'s last part.
    pub kind: &'static str,
    /// `eerdereAanleg` or `latereAanleg`.
    pub direction: &'static str,
    /// The platform's wording.
    pub label: String,
}

/// One ruling.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RsRuling {
    /// The ECLI.
    pub ecli: String,
    /// Index of its court.
    pub court: usize,
    /// Decision date, `YYYY-MM-DD`.
    pub date: String,
    /// Publication date.
    pub issued: String,
    /// Last modified, `YYYY-MM-DDThh:mm:ss`.
    pub modified: String,
    /// `Uitspraak` or `Conclusie`.
    pub kind: &'static str,
    /// Indices of its areas (a top-level one first, maybe a sub-area).
    pub areas: Vec<usize>,
    /// Index of its procedure.
    pub procedure: usize,
    /// Case number.
    pub case_number: String,
    /// Whether a text is published.
    pub has_text: bool,
    /// `doc` or `ecli` when withdrawn.
    pub deleted: Option<&'static str>,
    /// The inhoudsindicatie; `None` is published as `-`.
    pub summary: Option<String>,
    /// Formal relations.
    pub relations: Vec<RsRelation>,
    /// Vindplaatsen.
    pub vindplaatsen: Vec<String>,
    /// The old LJN it replaces.
    pub replaces: Option<String>,
}

/// The whole fake service's data.
#[derive(Debug)]
pub struct RsCorpus {
    /// The Instanties list.
    pub courts: Vec<RsCourt>,
    /// The Rechtsgebieden list, flattened (parents before their children).
    pub areas: Vec<RsArea>,
    /// The Proceduresoorten list.
    pub procedures: Vec<RsProcedure>,
    /// The rulings, in generation order.
    pub rulings: Vec<RsRuling>,
    by_ecli: HashMap<String, usize>,
}

/// A search as the service reads it (only the parameters it honours).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RsQuery {
    /// `type` values (any of them).
    pub types: Vec<String>,
    /// `creator` values (any of them).
    pub creators: Vec<String>,
    /// `subject` values (any of them).
    pub subjects: Vec<String>,
    /// `date`: one day, or an inclusive range.
    pub date: Option<(String, String)>,
    /// `modified`: since, or an inclusive range.
    pub modified: Option<(String, Option<String>)>,
    /// `return=DOC`.
    pub with_doc: bool,
    /// `replaces`.
    pub replaces: Option<String>,
    /// `sort=DESC`.
    pub descending: bool,
}

const TOWNS: &[&str] = &[
    "Alkmaar",
    "Almelo",
    "Amersfoort",
    "Amsterdam",
    "Apeldoorn",
    "Arnhem",
    "Assen",
    "Bergen op Zoom",
    "Beverwijk",
    "Boxmeer",
    "Breda",
    "Brielle",
    "Delft",
    "Den Helder",
    "Deventer",
    "Doetinchem",
    "Dordrecht",
    "Eindhoven",
    "Emmen",
    "Enschede",
    "Gorinchem",
    "Gouda",
    "Groningen",
    "Haarlem",
    "Harderwijk",
    "Heerenveen",
    "Heerlen",
    "Helmond",
    "Hilversum",
    "Hoorn",
    "Kampen",
    "Leeuwarden",
    "Leiden",
    "Lelystad",
    "Maastricht",
    "Middelburg",
    "Nijmegen",
    "Oostburg",
    "Oss",
    "Roermond",
    "Rotterdam",
    "Schiedam",
    "Sittard",
    "Sneek",
    "Terneuzen",
    "Tiel",
    "Tilburg",
    "Utrecht",
    "Venlo",
    "Winschoten",
    "Zaandam",
    "Zierikzee",
    "Zutphen",
    "Zwolle",
    "Goes",
    "Hengelo",
    "Meppel",
    "Steenwijk",
    "Winterswijk",
    "Wageningen",
    "Ede",
    "Culemborg",
    "Zaltbommel",
    "Vlissingen",
    "Hulst",
    "Schagen",
    "Purmerend",
    "Edam",
    "Weesp",
    "Naarden",
    "Alphen aan den Rijn",
    "Woerden",
    "Wijk bij Duurstede",
    "Amerongen",
    "Veenendaal",
    "Harlingen",
    "Dokkum",
    "Appingedam",
    "Veendam",
    "Stadskanaal",
    "Coevorden",
    "Hoogeveen",
    "Ommen",
    "Raalte",
    "Hardenberg",
    "Oldenzaal",
    "Groenlo",
    "Eibergen",
    "Lochem",
    "Elburg",
    "Nunspeet",
    "Epe",
    "Heerde",
    "Hattem",
    "Druten",
    "Grave",
    "Cuijk",
    "Gennep",
    "Weert",
    "Eijsden",
];

const ACTIVE: &[(&str, &str, &str, &str)] = &[
    ("Hoge Raad", "HR", "Hoge Raad", "Hoge_Raad_der_Nederlanden"),
    ("Parket bij de Hoge Raad", "PHR", "Hoge Raad", "Parket_bij_de_Hoge_Raad"),
    ("Raad van State", "RVS", "Raad van State", "Raad_van_State"),
    (
        "Centrale Raad van Beroep",
        "CRVB",
        "Centrale Raad van Beroep",
        "Centrale_Raad_van_Beroep",
    ),
    (
        "College van Beroep voor het bedrijfsleven",
        "CBB",
        "College van Beroep voor het bedrijfsleven",
        "College_van_Beroep_voor_het_bedrijfsleven",
    ),
    ("Gerechtshof Amsterdam", "GHAMS", "Gerechtshof", "Gerechtshof_Amsterdam"),
    (
        "Gerechtshof Arnhem-Leeuwarden",
        "GHARL",
        "Gerechtshof",
        "Gerechtshof_Arnhem-Leeuwarden",
    ),
    ("Gerechtshof Den Haag", "GHDHA", "Gerechtshof", "Gerechtshof_Den_Haag"),
    (
        "Gerechtshof 's-Hertogenbosch",
        "GHSHE",
        "Gerechtshof",
        "Gerechtshof_'s-Hertogenbosch",
    ),
    ("Rechtbank Amsterdam", "RBAMS", "Rechtbank", "Rechtbank_Amsterdam"),
    ("Rechtbank Den Haag", "RBDHA", "Rechtbank", "Rechtbank_Den_Haag"),
    ("Rechtbank Gelderland", "RBGEL", "Rechtbank", "Rechtbank_Gelderland"),
    ("Rechtbank Limburg", "RBLIM", "Rechtbank", "Rechtbank_Limburg"),
    (
        "Rechtbank Midden-Nederland",
        "RBMNE",
        "Rechtbank",
        "Rechtbank_Midden-Nederland",
    ),
    (
        "Rechtbank Noord-Holland",
        "RBNHO",
        "Rechtbank",
        "Rechtbank_Noord-Holland",
    ),
    (
        "Rechtbank Noord-Nederland",
        "RBNNE",
        "Rechtbank",
        "Rechtbank_Noord-Nederland",
    ),
    ("Rechtbank Oost-Brabant", "RBOBR", "Rechtbank", "Rechtbank_Oost-Brabant"),
    ("Rechtbank Overijssel", "RBOVE", "Rechtbank", "Rechtbank_Overijssel"),
    ("Rechtbank Rotterdam", "RBROT", "Rechtbank", "Rechtbank_Rotterdam"),
    (
        "Rechtbank Zeeland-West-Brabant",
        "RBZWB",
        "Rechtbank",
        "Rechtbank_Zeeland-West-Brabant",
    ),
    (
        "Centraal Tuchtcollege voor de Gezondheidszorg",
        "TGZCTG",
        "Tuchtcollege",
        "Centraal_Tuchtcollege_voor_de_Gezondheidszorg",
    ),
    ("Accountantskamer", "TACAKN", "Tuchtcollege", "Accountantskamer"),
    ("Hof van Discipline", "TAHVD", "Tuchtcollege", "Hof_van_Discipline"),
    (
        "Gerecht in eerste aanleg van Aruba",
        "OGEAA",
        "Gerecht in eerste aanleg",
        "Gerecht_in_Eerste_Aanleg_van_Aruba",
    ),
    (
        "Gerecht in eerste aanleg van Curaçao",
        "OGEAC",
        "Gerecht in eerste aanleg",
        "Gerecht_in_Eerste_Aanleg_van_Curacao",
    ),
];

/// Courts of [`ACTIVE`] that publish rulings in the corpus (indices into the list).
const PUBLISHING: std::ops::Range<usize> = 0..20;

const ENDED_RECHTBANKEN: &[(&str, &str)] = &[
    ("Alkmaar", "RBALK"),
    ("Almelo", "RBALM"),
    ("Arnhem", "RBARN"),
    ("Assen", "RBASS"),
    ("Breda", "RBBRE"),
    ("Dordrecht", "RBDOR"),
    ("Groningen", "RBGRO"),
    ("Haarlem", "RBHAA"),
    ("Leeuwarden", "RBLEE"),
    ("Maastricht", "RBMAA"),
    ("Middelburg", "RBMID"),
    ("Roermond", "RBROE"),
    ("'s-Gravenhage", "RBSGR"),
    ("'s-Hertogenbosch", "RBSHE"),
    ("Utrecht", "RBUTR"),
    ("Zutphen", "RBZUT"),
    ("Zwolle-Lelystad", "RBZLY"),
    ("Oost-Nederland", "RBONE"),
];

const AMBTENARENGERECHTEN: &[(&str, &str)] = &[
    ("Den Haag", "DH"),
    ("Amsterdam", "AM"),
    ("Arnhem", "AR"),
    ("Groningen", "GR"),
    ("'s-Hertogenbosch", "SH"),
    ("Rotterdam", "RO"),
    ("Utrecht", "UT"),
    ("Zwolle", "ZW"),
    ("Haarlem", "HA"),
    ("Maastricht", "MA"),
];

/// A top-level area: its identifier part, name, and sub-areas (identifier part, name).
type AreaTree = (&'static str, &'static str, &'static [(&'static str, &'static str)]);

const AREAS: &[AreaTree] = &[
    (
        "bestuursrecht",
        "Bestuursrecht",
        &[
            ("ambtenarenrecht", "Ambtenarenrecht"),
            ("belastingrecht", "Belastingrecht"),
            ("bestuursprocesrecht", "Bestuursprocesrecht"),
            ("omgevingsrecht", "Omgevingsrecht"),
            ("socialeZekerheidsrecht", "Socialezekerheidsrecht"),
            ("vreemdelingenrecht", "Vreemdelingenrecht"),
            ("mededingingsrecht", "Mededingingsrecht"),
        ],
    ),
    (
        "civielRecht",
        "Civiel recht",
        &[
            ("arbeidsrecht", "Arbeidsrecht"),
            ("burgerlijkProcesrecht", "Burgerlijk procesrecht"),
            ("insolventierecht", "Insolventierecht"),
            ("personenEnFamilierecht", "Personen- en familierecht"),
            ("verbintenissenrecht", "Verbintenissenrecht"),
            ("goederenrecht", "Goederenrecht"),
            ("ondernemingsrecht", "Ondernemingsrecht"),
        ],
    ),
    (
        "internationaalPubliekrecht",
        "Internationaal publiekrecht",
        &[("mensenrechten", "Mensenrechten"), ("volkenrecht", "Volkenrecht")],
    ),
    (
        "strafrecht",
        "Strafrecht",
        &[
            ("materieelStrafrecht", "Materieel strafrecht"),
            ("strafprocesrecht", "Strafprocesrecht"),
            ("penitentiairStrafrecht", "Penitentiair strafrecht"),
            ("internationaalStrafrecht", "Internationaal strafrecht"),
        ],
    ),
];

const PROCEDURES: &[(&str, &str)] = &[
    ("bodemzaak", "Bodemzaak"),
    ("cassatie", "Cassatie"),
    ("eersteAanlegEnkelvoudig", "Eerste aanleg - enkelvoudig"),
    ("eersteAanlegMeervoudig", "Eerste aanleg - meervoudig"),
    ("hogerBeroep", "Hoger beroep"),
    ("kortGeding", "Kort geding"),
    ("voorlopigeVoorziening", "Voorlopige voorziening"),
    ("herziening", "Herziening"),
    ("prejudicieleVraag", "Prejudiciële beslissing"),
    ("beschikking", "Beschikking"),
    ("verzet", "Verzet"),
    ("wraking", "Wraking"),
    ("cassatieInHetBelangDerWet", "Cassatie in het belang der wet"),
    ("proceskostenveroordeling", "Proceskostenveroordeling"),
];

fn courts() -> Vec<RsCourt> {
    let mut courts: Vec<RsCourt> = ACTIVE
        .iter()
        .map(|(name, abbr, kind, owms)| RsCourt {
            identifier: format!("{OWMS}{owms}"),
            name: (*name).to_owned(),
            abbreviation: (*abbr).to_owned(),
            kind,
            begin: if *abbr == "HR" { "1838-10-01" } else { "2013-01-01" },
            end: None,
        })
        .collect();
    for (town, abbr) in ENDED_RECHTBANKEN {
        courts.push(RsCourt {
            identifier: format!("{OWMS}Rechtbank_{}", town.replace(' ', "_")),
            name: format!("Rechtbank {town}"),
            abbreviation: (*abbr).to_owned(),
            kind: "Rechtbank",
            begin: "1838-10-01",
            end: Some(if *abbr == "RBONE" { "2014-01-01" } else { "2013-01-01" }),
        });
    }
    for (town, code) in AMBTENARENGERECHTEN {
        courts.push(RsCourt {
            // The historic psi form, with its space (`…/AG DH`).
            identifier: format!("{PSI}AG {code}"),
            name: format!("Ambtenarengerecht {town}"),
            abbreviation: format!("AG{code}"),
            kind: "Ambtenarengerecht",
            begin: "1903-01-01",
            end: Some("1994-01-01"),
        });
    }
    for town in TOWNS {
        let code: String = town
            .chars()
            .filter(|c| c.is_ascii_alphabetic())
            .take(6)
            .collect::<String>()
            .to_ascii_uppercase();
        courts.push(RsCourt {
            identifier: format!("{PSI}ktg{}", code.to_ascii_lowercase()),
            name: format!("Kantongerecht {town}"),
            abbreviation: format!("KTG{code}"),
            kind: "Kantongerecht",
            begin: "1838-10-01",
            end: Some("2002-01-01"),
        });
    }
    courts
}

fn areas() -> Vec<RsArea> {
    let mut areas = Vec::new();
    for (id, name, subs) in AREAS {
        let parent = areas.len();
        areas.push(RsArea {
            identifier: format!("{AREA}{id}"),
            name: (*name).to_owned(),
            parent: None,
        });
        for (sub, sub_name) in *subs {
            areas.push(RsArea {
                identifier: format!("{AREA}{id}_{sub}"),
                name: (*sub_name).to_owned(),
                parent: Some(parent),
            });
        }
    }
    areas
}

fn day_string(day: NaiveDate) -> String {
    day.format("%Y-%m-%d").to_string()
}

const SEED: u64 = 0x5253_2026;

impl RsCorpus {
    /// The corpus, generated from a fixed seed.
    pub fn generate() -> RsCorpus {
        let courts = courts();
        let areas = areas();
        let procedures: Vec<RsProcedure> = PROCEDURES
            .iter()
            .map(|(id, name)| RsProcedure {
                identifier: format!("{PROCEDURE}{id}"),
                name: (*name).to_owned(),
            })
            .collect();
        let mut g = Generator {
            courts: &courts,
            areas: &areas,
            seq: vec![0; courts.len()],
            rulings: Vec::new(),
        };
        g.special();
        let first_day = day(2026, 1, 5);
        let busy = parse_date(BUSY_DAY).expect("BUSY_DAY is a day");
        for i in 0..OTHER_RULINGS {
            g.ruling(i, days_after(first_day, pick(SEED, i as u64, 299) as u64));
        }
        for i in 0..BUSY_DAY_RULINGS {
            g.ruling(OTHER_RULINGS + i, busy);
        }
        let rulings = g.rulings;
        let by_ecli = rulings.iter().enumerate().map(|(i, r)| (r.ecli.clone(), i)).collect();
        RsCorpus {
            courts,
            areas,
            procedures,
            rulings,
            by_ecli,
        }
    }

    /// The ruling `ecli`, if the corpus has it.
    pub fn ruling(&self, ecli: &str) -> Option<&RsRuling> {
        self.by_ecli.get(ecli).map(|&i| &self.rulings[i])
    }

    /// The court of `ruling`.
    pub fn court_of(&self, ruling: &RsRuling) -> &RsCourt {
        &self.courts[ruling.court]
    }

    /// Every ruling `query` matches, in the feed's order (modified date, then generation
    /// order; reversed for `DESC`).
    pub fn search(&self, query: &RsQuery) -> Vec<&RsRuling> {
        let mut hits: Vec<(usize, &RsRuling)> = self
            .rulings
            .iter()
            .enumerate()
            .filter(|(_, r)| self.matches(r, query))
            .collect();
        hits.sort_by(|(ia, a), (ib, b)| a.modified.cmp(&b.modified).then(ia.cmp(ib)));
        if query.descending {
            hits.reverse();
        }
        hits.into_iter().map(|(_, r)| r).collect()
    }

    fn matches(&self, r: &RsRuling, q: &RsQuery) -> bool {
        let court = &self.courts[r.court];
        (q.types.is_empty() || q.types.iter().any(|t| t == r.kind))
            && (q.creators.is_empty() || q.creators.contains(&court.identifier))
            && (q.subjects.is_empty()
                || q.subjects
                    .iter()
                    .any(|s| r.areas.iter().any(|&a| self.areas[a].identifier == *s)))
            && q.date
                .as_ref()
                .is_none_or(|(from, to)| *from <= r.date && r.date <= *to)
            && q.modified
                .as_ref()
                .is_none_or(|(since, until)| *since <= r.modified && until.as_ref().is_none_or(|u| r.modified <= *u))
            && (!q.with_doc || (r.has_text && r.deleted.is_none()))
            && q.replaces.as_ref().is_none_or(|l| r.replaces.as_ref() == Some(l))
    }

    /// The Atom entry title: "ECLI, court, dd-mm-yyyy, case number".
    pub fn title(&self, r: &RsRuling) -> String {
        format!(
            "{}, {}, {}, {}",
            r.ecli,
            self.courts[r.court].name,
            dutch_date(&r.date),
            r.case_number
        )
    }

    /// The Instanties list as the service sends it (identifiers wrapped in whitespace).
    pub fn instanties_xml(&self) -> String {
        let mut x = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<Instanties>\n");
        for c in &self.courts {
            let _ = write!(
                x,
                "  <Instantie>\n    <Naam>{}</Naam>\n    <Afkorting>{}</Afkorting>\n    <Type>{}</Type>\n    <BeginDate>{}</BeginDate>\n",
                esc(&c.name),
                esc(&c.abbreviation),
                esc(c.kind),
                c.begin
            );
            if let Some(end) = c.end {
                let _ = writeln!(x, "    <EndDate>{end}</EndDate>");
            }
            let _ = write!(
                x,
                "    <Identifier>\n      {}\n    </Identifier>\n  </Instantie>\n",
                esc(&c.identifier)
            );
        }
        x.push_str("</Instanties>\n");
        x
    }

    /// The Rechtsgebieden list, nested.
    pub fn rechtsgebieden_xml(&self) -> String {
        let mut x = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<Rechtsgebieden>\n");
        for (i, top) in self.areas.iter().enumerate().filter(|(_, a)| a.parent.is_none()) {
            let _ = write!(
                x,
                "  <Rechtsgebied>\n    <Identifier>{}</Identifier>\n    <Naam>{}</Naam>\n",
                esc(&top.identifier),
                esc(&top.name)
            );
            for sub in self.areas.iter().filter(|a| a.parent == Some(i)) {
                let _ = write!(
                    x,
                    "    <Rechtsgebied>\n      <Identifier>\n        {}\n      </Identifier>\n      <Naam>{}</Naam>\n    </Rechtsgebied>\n",
                    esc(&sub.identifier),
                    esc(&sub.name)
                );
            }
            x.push_str("  </Rechtsgebied>\n");
        }
        x.push_str("</Rechtsgebieden>\n");
        x
    }

    /// The Proceduresoorten list.
    pub fn proceduresoorten_xml(&self) -> String {
        let mut x = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<Proceduresoorten>\n");
        for p in &self.procedures {
            let _ = write!(
                x,
                "  <Proceduresoort>\n    <Identifier>{}</Identifier>\n    <Naam>{}</Naam>\n  </Proceduresoort>\n",
                esc(&p.identifier),
                esc(&p.name)
            );
        }
        x.push_str("</Proceduresoorten>\n");
        x
    }

    /// `/uitspraken/content` for `r`: the RDF, and unless `meta_only` the inhoudsindicatie
    /// and the text (when it has one).
    pub fn content_xml(&self, r: &RsRuling, meta_only: bool) -> String {
        let court = &self.courts[r.court];
        let mut x = String::from("<?xml version=\"1.0\" encoding=\"utf-8\"?>\n<open-rechtspraak>\n");
        x.push_str(
            "  <rdf:RDF xmlns:rdf=\"http://www.w3.org/1999/02/22-rdf-syntax-ns#\" \
             xmlns:rdfs=\"http://www.w3.org/2000/01/rdf-schema#\" xmlns:dcterms=\"http://purl.org/dc/terms/\" \
             xmlns:psi=\"http://psi.rechtspraak.nl/\" xmlns:ecli=\"https://e-justice.europa.eu/ecli\" \
             xmlns:bwb=\"bwb-dl\" xmlns:cvdr=\"http://decentrale.regelgeving.overheid.nl/cvdr/\">\n",
        );
        x.push_str("    <rdf:Description>\n");
        let _ = writeln!(x, "      <dcterms:identifier>{}</dcterms:identifier>", r.ecli);
        x.push_str("      <dcterms:format>text/xml</dcterms:format>\n      <dcterms:accessRights>public</dcterms:accessRights>\n");
        let _ = writeln!(x, "      <dcterms:modified>{}</dcterms:modified>", r.modified);
        let _ = writeln!(
            x,
            "      <dcterms:issued rdfs:label=\"Publicatiedatum\">{}</dcterms:issued>",
            r.issued
        );
        x.push_str("      <dcterms:publisher rdfs:label=\"Uitgever\" resourceIdentifier=\"http://standaarden.overheid.nl/owms/terms/Raad_voor_de_Rechtspraak\">Raad voor de Rechtspraak</dcterms:publisher>\n");
        x.push_str("      <dcterms:language>nl</dcterms:language>\n");
        let _ = writeln!(
            x,
            "      <dcterms:creator rdfs:label=\"Instantie\" resourceIdentifier=\"{}\">{}</dcterms:creator>",
            esc(&court.identifier),
            esc(&court.name)
        );
        let _ = writeln!(
            x,
            "      <dcterms:date rdfs:label=\"Uitspraakdatum\">{}</dcterms:date>",
            r.date
        );
        let _ = writeln!(
            x,
            "      <psi:zaaknummer rdfs:label=\"Zaaknr\">{}</psi:zaaknummer>",
            esc(&r.case_number)
        );
        let _ = writeln!(
            x,
            "      <dcterms:type rdfs:label=\"Type\" resourceIdentifier=\"http://psi.rechtspraak.nl/{}\">{}</dcterms:type>",
            r.kind.to_ascii_lowercase(),
            r.kind
        );
        let p = &self.procedures[r.procedure];
        let _ = writeln!(
            x,
            "      <psi:procedure rdfs:label=\"Procedure\" resourceIdentifier=\"{}\">{}</psi:procedure>",
            esc(&p.identifier),
            esc(&p.name)
        );
        for &a in &r.areas {
            let area = &self.areas[a];
            let name = match area.parent {
                Some(top) => format!("{}; {}", self.areas[top].name, area.name),
                None => area.name.clone(),
            };
            let _ = writeln!(
                x,
                "      <dcterms:subject rdfs:label=\"Rechtsgebied\" resourceIdentifier=\"{}\">{}</dcterms:subject>",
                esc(&area.identifier),
                esc(&name)
            );
        }
        for rel in &r.relations {
            let _ = writeln!(
                x,
                "      <dcterms:relation ecli:resourceIdentifier=\"{}\" psi:type=\"http://psi.rechtspraak.nl/{}\" psi:aanleg=\"http://psi.rechtspraak.nl/{}\" rdfs:label=\"Formele relatie\">{}</dcterms:relation>",
                rel.ecli,
                rel.kind,
                rel.direction,
                esc(&rel.label)
            );
        }
        if !r.vindplaatsen.is_empty() {
            x.push_str("      <dcterms:hasVersion rdfs:label=\"Vindplaatsen\" resourceIdentifier=\"http://psi.rechtspraak.nl/vindplaats\">\n        <rdf:list>\n");
            for v in &r.vindplaatsen {
                let _ = writeln!(x, "          <rdf:li>{}</rdf:li>", esc(v));
            }
            x.push_str("        </rdf:list>\n      </dcterms:hasVersion>\n");
        }
        if let Some(ljn) = &r.replaces {
            let _ = writeln!(
                x,
                "      <dcterms:replaces ecli:resourceIdentifier=\"{ljn}\">{ljn}</dcterms:replaces>"
            );
        }
        x.push_str("    </rdf:Description>\n");
        let _ = write!(
            x,
            "    <rdf:Description rdf:about=\"https://uitspraken.rechtspraak.nl/InzienDocument?id={e}\">\n      <dcterms:identifier>https://uitspraken.rechtspraak.nl/InzienDocument?id={e}</dcterms:identifier>\n      <dcterms:format>text/html</dcterms:format>\n      <dcterms:title>{t}</dcterms:title>\n    </rdf:Description>\n  </rdf:RDF>\n",
            e = r.ecli,
            t = esc(&self.title(r))
        );
        if !meta_only && r.deleted.is_none() {
            let summary = r.summary.as_deref().unwrap_or("-");
            let _ = writeln!(
                x,
                "  <inhoudsindicatie id=\"{}:INH\"><para>{}</para></inhoudsindicatie>",
                r.ecli,
                esc(summary)
            );
            if r.has_text {
                x.push_str(&self.body_xml(r));
            }
        }
        x.push_str("</open-rechtspraak>\n");
        x
    }

    fn body_xml(&self, r: &RsRuling) -> String {
        let element = if r.kind == "Conclusie" {
            "conclusie"
        } else {
            "uitspraak"
        };
        let court = &self.courts[r.court];
        let area = &self.areas[r.areas[0]].name;
        let mut x = format!(
            "  <{element} id=\"{}:DOC\" xml:space=\"preserve\" xmlns=\"http://www.rechtspraak.nl/schema/rechtspraak-1.0\">\n",
            r.ecli
        );
        let _ = writeln!(
            x,
            "    <{element}.info><para>{}</para><para>Zaaknummer: {}</para><para>datum: {}</para></{element}.info>",
            esc(&court.name.to_uppercase()),
            esc(&r.case_number),
            dutch_date(&r.date)
        );
        if r.ecli == FOOTNOTES_ECLI {
            x.push_str(FOOTNOTES_BODY);
        } else if r.ecli == LONG_ECLI {
            x.push_str("    <section role=\"overwegingen\"><title><nr>1</nr>Beoordeling</title>\n");
            for n in 1..=LONG_PARAGRAPHS {
                let _ = writeln!(
                    x,
                    "      <parablock><nr>1.{n}.</nr><para>Onderdeel {n} van het middel klaagt dat het hof bij de \
                     begroting van de schade is uitgegaan van een onjuiste maatstaf. De klacht faalt: het hof heeft \
                     de stellingen van partijen in hun onderlinge samenhang beoordeeld en zijn oordeel toereikend \
                     gemotiveerd; zie ook de conclusie onder {n}.2 en de daar genoemde rechtspraak over artikel \
                     6:97 BW en de schatting van schade.</para></parablock>"
                );
            }
            x.push_str("    </section>\n    <section role=\"beslissing\"><title><nr>2</nr>Conclusie</title><para>De conclusie strekt tot verwerping van het beroep.</para></section>\n");
        } else {
            let _ = write!(
                x,
                "    <section role=\"procesverloop\"><title><nr>1</nr>Het procesverloop</title>\n      <parablock><nr>1.1.</nr><para>De zaak {} is behandeld door de {}.</para></parablock>\n    </section>\n    <section role=\"overwegingen\"><title><nr>2</nr>De beoordeling</title>\n      <parablock><nr>2.1.</nr><para>Het geschil ligt op het terrein van het <emphasis role=\"italic\">{}</emphasis>.</para></parablock>\n      <parablock><nr>2.2.</nr><para>Overwegingen in zaak {}.</para></parablock>\n    </section>\n    <section role=\"beslissing\"><title><nr>3</nr>De beslissing</title><para>Beslist in {}.</para></section>\n",
                esc(&r.case_number),
                esc(&court.name),
                esc(&area.to_lowercase()),
                r.ecli,
                r.ecli
            );
        }
        let _ = writeln!(x, "  </{element}>");
        x
    }
}

/// The body of [`FOOTNOTES_ECLI`] (after its header).
const FOOTNOTES_BODY: &str = r#"    <paragroup><title><nr>1</nr>Het geding in cassatie</title>
      <parablock><nr>1.1</nr><para>Eiseres heeft beroep in cassatie ingesteld<footnote label="1"><para>Procesinleiding van 3 maart 2026.</para></footnote> tegen het arrest van het hof.</para></parablock>
      <parablock><nr>1.2</nr><para>De conclusie van de Advocaat-Generaal<footnote label="2"><para>ECLI:NL:PHR:2026:400.</para></footnote> strekt tot verwerping.</para></parablock>
    </paragroup>
    <paragroup><title><nr>2</nr>Beoordeling van het middel</title>
      <bridgehead>Schadevergoeding</bridgehead>
      <parablock><nr>2.1</nr><para>Het hof heeft de schade als volgt begroot:</para></parablock>
      <table><tgroup cols="2"><thead><row><entry>Post</entry><entry>Bedrag</entry></row></thead>
        <tbody><row><entry>Materiële schade</entry><entry>&#8364; 12.500</entry></row><row><entry>Immateriële schade</entry><entry>&#8364; 2.000</entry></row></tbody></tgroup></table>
      <parablock><nr>2.2</nr><para>Het middel klaagt dat:</para></parablock>
      <orderedlist><listitem><para>het hof de maatstaf heeft miskend;</para></listitem><listitem><para>het oordeel onbegrijpelijk is.</para></listitem></orderedlist>
      <blockquote><para>Artikel 6:162 lid 1 BW: Hij die jegens een ander een onrechtmatige daad pleegt, is verplicht de schade te vergoeden.</para></blockquote>
      <itemizedlist><listitem><para>eerste klacht faalt</para></listitem><listitem><para>tweede klacht slaagt</para></listitem></itemizedlist>
      <mediaobject><imageobject><imagedata fileref="situatieschets.png"/></imageobject></mediaobject>
      <kop.onbekend>Een element dat de lezer niet kent.</kop.onbekend>
    </paragroup>
    <paragroup><title><nr>3</nr>Beslissing</title><para>De Hoge Raad vernietigt het arrest van het hof.</para></paragroup>
"#;

struct Generator<'a> {
    courts: &'a [RsCourt],
    areas: &'a [RsArea],
    seq: Vec<u32>,
    rulings: Vec<RsRuling>,
}

impl Generator<'_> {
    fn court(&self, abbreviation: &str) -> usize {
        self.courts
            .iter()
            .position(|c| c.abbreviation == abbreviation)
            .unwrap_or(0)
    }

    fn area(&self, id: &str) -> usize {
        let identifier = format!("{AREA}{id}");
        self.areas.iter().position(|a| a.identifier == identifier).unwrap_or(0)
    }

    fn next_ecli(&mut self, court: usize, year: &str) -> String {
        self.seq[court] += 1;
        format!("ECLI:NL:{}:{year}:{}", self.courts[court].abbreviation, self.seq[court])
    }

    /// The two hand-written rulings.
    fn special(&mut self) {
        let hr = self.court("HR");
        let phr = self.court("PHR");
        let rbams = self.court("RBAMS");
        self.seq[hr] = 1_499;
        self.seq[rbams] = 9_998;
        let footnotes = self.next_ecli(hr, "2026");
        let metadata_only = self.next_ecli(rbams, "2026");
        debug_assert_eq!(footnotes, FOOTNOTES_ECLI);
        debug_assert_eq!(metadata_only, METADATA_ONLY_ECLI);
        self.seq[hr] = 0;
        self.seq[rbams] = 0;
        self.seq[phr] = 399;
        let conclusie = self.next_ecli(phr, "2026");
        let areas = vec![self.area("civielRecht"), self.area("civielRecht_verbintenissenrecht")];
        self.rulings.push(RsRuling {
            ecli: footnotes.clone(),
            court: hr,
            date: "2026-06-12".into(),
            issued: "2026-06-12".into(),
            modified: "2026-06-15T09:30:00".into(),
            kind: "Uitspraak",
            areas: areas.clone(),
            procedure: 1,
            case_number: "25/01234".into(),
            has_text: true,
            deleted: None,
            summary: Some("Onrechtmatige daad; begroting van schade; motiveringsklacht slaagt.".into()),
            relations: vec![
                RsRelation {
                    ecli: conclusie.clone(),
                    kind: "conclusie",
                    direction: "eerdereAanleg",
                    label: format!("Conclusie: {conclusie}"),
                },
                RsRelation {
                    ecli: "ECLI:NL:GHAMS:2025:77".into(),
                    kind: "cassatie",
                    direction: "eerdereAanleg",
                    label: "In cassatie op: ECLI:NL:GHAMS:2025:77".into(),
                },
            ],
            vindplaatsen: vec!["Rechtspraak.nl".into(), "NJ 2026/201".into(), "RvdW 2026/700".into()],
            replaces: None,
        });
        self.rulings.push(RsRuling {
            ecli: conclusie.clone(),
            court: phr,
            date: "2026-04-17".into(),
            issued: "2026-05-01".into(),
            modified: "2026-05-01T10:00:00".into(),
            kind: "Conclusie",
            areas,
            procedure: 1,
            case_number: "25/01234".into(),
            has_text: true,
            deleted: None,
            summary: Some("Conclusie A-G; strekt tot verwerping.".into()),
            relations: vec![RsRelation {
                ecli: footnotes.clone(),
                kind: "conclusie",
                direction: "latereAanleg",
                label: format!("Uitspraak: {footnotes}"),
            }],
            vindplaatsen: vec!["Rechtspraak.nl".into()],
            replaces: None,
        });
        self.rulings.push(RsRuling {
            ecli: metadata_only,
            court: rbams,
            date: "2026-09-01".into(),
            issued: "2026-09-04".into(),
            modified: "2026-09-04T11:11:11".into(),
            kind: "Uitspraak",
            areas: vec![self.area("strafrecht")],
            procedure: 3,
            case_number: "13/123456-26".into(),
            has_text: false,
            deleted: None,
            summary: None,
            relations: Vec::new(),
            vindplaatsen: vec!["Rechtspraak.nl".into()],
            replaces: None,
        });
    }

    /// The `i`-th generated ruling, decided on day `day`.
    fn ruling(&mut self, i: usize, day: NaiveDate) {
        let publishing: Vec<usize> = PUBLISHING.filter(|&c| self.courts[c].abbreviation != "PHR").collect();
        let court = publishing[pick(SEED ^ 1, i as u64, publishing.len())];
        let abbreviation = self.courts[court].abbreviation.clone();
        let top_id = match abbreviation.as_str() {
            "RVS" | "CRVB" | "CBB" => "bestuursrecht",
            "HR" => ["civielRecht", "strafrecht"][pick(SEED ^ 2, i as u64, 2)],
            _ => AREAS[pick(SEED ^ 2, i as u64, AREAS.len())].0,
        };
        let top = self.area(top_id);
        let mut areas = vec![top];
        // Courts often tag only the top level: one ruling in three also names a sub-area.
        if pick(SEED ^ 3, i as u64, 3) == 0 {
            let subs: Vec<usize> = (0..self.areas.len())
                .filter(|&a| self.areas[a].parent == Some(top))
                .collect();
            areas.push(subs[pick(SEED ^ 4, i as u64, subs.len())]);
        }
        let procedure = match self.courts[court].kind {
            "Hoge Raad" => 1,
            "Gerechtshof" | "Raad van State" | "Centrale Raad van Beroep" => 4,
            "College van Beroep voor het bedrijfsleven" => 0,
            _ => [0, 2, 3, 5, 6, 9][pick(SEED ^ 5, i as u64, 6)],
        };
        let date = day_string(day);
        let ecli = self.next_ecli(court, &date[0..4]);
        let modified_day = days_after(day, 1 + pick(SEED ^ 6, i as u64, 6) as u64);
        let secs = pick(SEED ^ 7, i as u64, 36_000) + 7 * 3_600;
        let modified = format!(
            "{}T{:02}:{:02}:{:02}",
            day_string(modified_day),
            secs / 3_600,
            secs / 60 % 60,
            secs % 60
        );
        let deleted = if i % 97 == 13 {
            Some("doc")
        } else if i % 211 == 17 {
            Some("ecli")
        } else {
            None
        };
        let has_text = i % 9 != 4 && deleted.is_none();
        let area_name = self.areas[areas[areas.len() - 1]].name.clone();
        let summary = has_text.then(|| {
            format!(
                "{area_name}. {} van de {} in zaak {}.",
                PROCEDURES[procedure].1,
                self.courts[court].name,
                i + 1
            )
        });
        let mut vindplaatsen = vec!["Rechtspraak.nl".to_owned()];
        if i.is_multiple_of(5) {
            vindplaatsen.push(format!("NJ {}/{}", &date[0..4], i % 700 + 1));
        }
        let case_number = format!("{}/{:05}", &date[2..4], 10_000 + i);
        let ruling = RsRuling {
            ecli: ecli.clone(),
            court,
            date: date.clone(),
            issued: day_string(modified_day),
            modified,
            kind: "Uitspraak",
            areas: areas.clone(),
            procedure,
            case_number: case_number.clone(),
            has_text,
            deleted,
            summary,
            relations: Vec::new(),
            vindplaatsen,
            replaces: (i % 50 == 7).then(|| format!("BX{:04}", i % 10_000)),
        };
        self.rulings.push(ruling);
        // A Hoge Raad judgment comes with its advocate general's conclusie.
        if abbreviation == "HR" && i.is_multiple_of(2) {
            let phr = self.court("PHR");
            let conclusie = self.next_ecli(phr, &date[0..4]);
            let at = self.rulings.len() - 1;
            self.rulings[at].relations.push(RsRelation {
                ecli: conclusie.clone(),
                kind: "conclusie",
                direction: "eerdereAanleg",
                label: format!("Conclusie: {conclusie}"),
            });
            self.rulings.push(RsRuling {
                ecli: conclusie,
                court: phr,
                date: day_string(day - Days::new(30)),
                issued: day_string(day - Days::new(20)),
                modified: format!("{}T08:00:00", day_string(day - Days::new(20))),
                kind: "Conclusie",
                areas,
                procedure: 1,
                case_number,
                has_text: true,
                deleted: None,
                summary: Some(format!("Conclusie A-G in zaak {}.", i + 1)),
                relations: vec![RsRelation {
                    ecli,
                    kind: "conclusie",
                    direction: "latereAanleg",
                    label: "Uitspraak in cassatie".into(),
                }],
                vindplaatsen: vec!["Rechtspraak.nl".to_owned()],
                replaces: None,
            });
        }
    }
}

/// `yyyy-mm-dd` as `dd-mm-yyyy`.
pub fn dutch_date(iso: &str) -> String {
    format!("{}-{}-{}", &iso[8..10], &iso[5..7], &iso[0..4])
}

/// XML-escapes text and attribute values.
pub(crate) fn esc(text: &str) -> String {
    text.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_corpus_has_its_promised_shape() {
        let c = RsCorpus::generate();
        assert!(c.courts.len() >= 150, "{} courts", c.courts.len());
        assert!(c.courts.iter().filter(|c| c.end.is_some()).count() > 100);
        assert!(c.courts.iter().any(|c| c.identifier.ends_with("/AG DH")));
        let busy = c.rulings.iter().filter(|r| r.date == BUSY_DAY).count();
        assert_eq!(
            busy,
            BUSY_DAY_RULINGS
                + c.rulings
                    .iter()
                    .filter(|r| r.date == BUSY_DAY && r.kind == "Conclusie")
                    .count()
        );
        assert!(c.ruling(FOOTNOTES_ECLI).is_some_and(|r| r.has_text));
        assert!(c.ruling(METADATA_ONLY_ECLI).is_some_and(|r| !r.has_text));
        let long = c.ruling(LONG_ECLI).expect("the long conclusie");
        assert!(long.has_text && long.kind == "Conclusie");
        assert!(c.content_xml(long, false).len() > 50_000, "far longer than a page");
        let eclis: std::collections::BTreeSet<&str> = c.rulings.iter().map(|r| r.ecli.as_str()).collect();
        assert_eq!(eclis.len(), c.rulings.len(), "ECLIs are unique");
        let ids: std::collections::BTreeSet<&str> = c.courts.iter().map(|c| c.identifier.as_str()).collect();
        assert_eq!(ids.len(), c.courts.len(), "court identifiers are unique");
        let abbreviations: std::collections::BTreeSet<&str> =
            c.courts.iter().map(|c| c.abbreviation.as_str()).collect();
        assert_eq!(abbreviations.len(), c.courts.len(), "abbreviations are unique");
        let tagged_sub = c.rulings.iter().filter(|r| r.areas.len() > 1).count();
        assert!(
            tagged_sub * 2 < c.rulings.len(),
            "most rulings carry only a top-level area"
        );
    }
}
