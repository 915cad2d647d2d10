//! Fake Basiswettenbestand (`bwb`): KOOP's SRU 1.2 search of national legislation
//! (`/sru/Search?operation=searchRetrieve&version=1.2&x-connection=BWB&query=…`) and the
//! toestand XML of each version (`/bwb/{id}/{from}_{n}/xml/{id}_{from}_{n}.xml`), strict
//! like the service (`docs/platforms.md`), over generated regulations ([`REGULATIONS`])
//! and the real toestanden of `corpus/bwb/` ([`regulations`]). One of KOOP's regulation
//! collections, whose fake `regulation.rs` writes once: what is the Basiswettenbestand's
//! own is here — its regulations, its CQL, its records and its toestanden.
//!
//! Invariants:
//! - The envelope, the request's checks and the refusals are the shared SRU service's
//!   (HTTP 200 with a diagnostic and no count for another `x-connection` or a bad number
//!   `1/6`, another version `1/5`, a missing query `1/7`); this fake's own are its CQL — an
//!   unknown index (`1/16`, a bare term included), a clause it cannot parse (`1/10`) — and
//!   its records.
//! - One record per version: without `overheidbwb.geldigheidsdatum==DATE` every version
//!   of a regulation matches; with it, the one in force on that day. Records come in
//!   identifier order, then by the version's start.
//! - Title words match whole words of the title or the citation title, ignoring case.
//! - A real toestand is a version of its regulation: id and in-force-from date from its
//!   file name (`BWBR…_YYYY-MM-DD_N.xml`), title and citation title from its
//!   `citeertitel` (the `meta-data` inside left out; the `intitule` when it has none), kind
//!   from `wetgeving soort`, in force until the day before the corpus's next version of the
//!   same regulation, or open; it has no ministry or area of law (its file does not say).
//!   Its toestand is served at the record's `locatie_toestand` as the file is, byte for
//!   byte.
//!
//! Settings ([`crate::ZoekserviceSettings`]): the service's own trouble by count of searches — every
//! n-th answered with a syntax diagnostic (the service rejecting a query it usually
//! takes), or with a system diagnostic and no count (overload).
//!
//! What this fake does not do: `sortBy`, `any`/`all` beyond the title index, the wti and
//! manifest files, or regulations beyond these.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::OnceLock;

use besluitbron_core::{Platform, PlatformId};

use crate::parse_date;
use crate::real;
use crate::regulation::{self, Numbered, RegulationFake, article_xml, leak};
use crate::sru::{self, SruDiagnostic, escape};

/// The search's path under the fake's root.
pub const SRU_PATH: &str = regulation::SRU_PATH;

/// The platform this fake imitates (its short id and public name, as the server's
/// connector declares them).
pub const PLATFORM: PlatformId = PlatformId::of(&Platform {
    id: "bwb",
    name: "Basiswettenbestand",
});

/// The Basiswettenbestand fake, as its registry line names it.
pub(crate) type Fake = regulation::Fake<FakeRegulation>;

/// One article of a version: its division's index, number, title and paragraphs.
#[derive(Clone, Copy, Debug)]
pub struct FakeArticle {
    /// The division it stands in (index into the regulation's divisions).
    pub division: usize,
    /// Its number, e.g. `1:3`.
    pub number: &'static str,
    /// Its heading's title, if any.
    pub title: Option<&'static str>,
    /// Its paragraphs (`lid`s, numbered from 1 when there is more than one).
    pub paragraphs: &'static [&'static str],
}

/// One version (toestand) of a regulation.
#[derive(Clone, Copy, Debug)]
pub struct FakeVersion {
    /// In force from.
    pub from: &'static str,
    /// In force until (`9999-12-31`: open).
    pub until: &'static str,
    /// The toestand's number among those starting that day (the `_N` of its file name).
    pub n: u32,
    /// Its articles (none for a real toestand: its text is its file).
    pub articles: &'static [FakeArticle],
    /// A real toestand's file, byte for byte (`None`: generated from its articles).
    pub real: Option<&'static [u8]>,
}

/// A regulation of the fake's data.
#[derive(Clone, Copy, Debug)]
pub struct FakeRegulation {
    /// BWB id.
    pub id: &'static str,
    /// Title.
    pub title: &'static str,
    /// Citation title.
    pub citation_title: &'static str,
    /// Kind (`dcterms:type`).
    pub kind: &'static str,
    /// Ministry (`None`: not known, as for a real toestand).
    pub authority: Option<&'static str>,
    /// Area of law (`None`: not known).
    pub area: Option<&'static str>,
    /// Its divisions: (label, number, title).
    pub divisions: &'static [(&'static str, &'static str, &'static str)],
    /// Its versions, oldest first.
    pub versions: &'static [FakeVersion],
}

impl FakeRegulation {
    /// The version in force on `date`.
    pub fn in_force(&self, date: &str) -> Option<&FakeVersion> {
        self.versions.iter().find(|v| v.from <= date && date <= v.until)
    }
}

const OPEN: &str = "9999-12-31";

/// The law whose article 2 changed on 2025-07-01, and which gained article 3 then.
pub const FIREWORKS_LAW: &str = "BWBR0047001";
/// The Algemene wet bestuursrecht, with articles numbered `1:1` … `1:3`.
pub const AWB: &str = "BWBR0005537";

/// The fake's generated regulations (the real ones: [`regulations`]).
pub static REGULATIONS: &[FakeRegulation] = &[
    FakeRegulation {
        id: AWB,
        title: "Algemene wet bestuursrecht",
        citation_title: "Algemene wet bestuursrecht",
        kind: "wet",
        authority: Some("Justitie en Veiligheid"),
        area: Some("Bestuursrecht"),
        divisions: &[
            ("Hoofdstuk", "1", "Inleidende bepalingen"),
            ("Titel", "1.1", "Definities en reikwijdte"),
        ],
        versions: &[FakeVersion {
            from: "2024-01-01",
            until: OPEN,
            n: 0,
            real: None,
            articles: &[
                FakeArticle {
                    division: 1,
                    number: "1:1",
                    title: None,
                    paragraphs: &[
                        "Onder bestuursorgaan wordt verstaan: een orgaan van een rechtspersoon die krachtens \
                         publiekrecht is ingesteld, of een ander persoon of college, met enig openbaar gezag bekleed.",
                    ],
                },
                FakeArticle {
                    division: 1,
                    number: "1:2",
                    title: None,
                    paragraphs: &[
                        "Onder belanghebbende wordt verstaan: degene wiens belang rechtstreeks bij een besluit is \
                         betrokken.",
                    ],
                },
                FakeArticle {
                    division: 1,
                    number: "1:3",
                    title: None,
                    paragraphs: &[
                        "Onder besluit wordt verstaan: een schriftelijke beslissing van een bestuursorgaan, \
                         inhoudende een publiekrechtelijke rechtshandeling.",
                        "Onder beschikking wordt verstaan: een besluit dat niet van algemene strekking is, met \
                         inbegrip van de afwijzing van een aanvraag daarvan.",
                        "Onder aanvraag wordt verstaan: een verzoek van een belanghebbende, een besluit te nemen.",
                    ],
                },
            ],
        }],
    },
    FakeRegulation {
        id: "BWBR0013360",
        title: "Vuurwerkbesluit",
        citation_title: "Vuurwerkbesluit",
        kind: "AMvB",
        authority: Some("Infrastructuur en Waterstaat"),
        area: Some("Milieurecht"),
        divisions: &[("Hoofdstuk", "1", "Algemeen")],
        versions: &[FakeVersion {
            from: "2024-01-01",
            until: OPEN,
            n: 0,
            real: None,
            articles: &[FakeArticle {
                division: 0,
                number: "1.1.1",
                title: Some("Begripsbepalingen"),
                paragraphs: &["In dit besluit wordt verstaan onder consumentenvuurwerk: vuurwerk van categorie F1."],
            }],
        }],
    },
    FakeRegulation {
        id: FIREWORKS_LAW,
        title: "Wet van 12 juni 2023, houdende regels over het afsteken van consumentenvuurwerk",
        citation_title: "Wet consumentenvuurwerk",
        kind: "wet",
        authority: Some("Justitie en Veiligheid"),
        area: Some("Openbare orde"),
        divisions: &[("Hoofdstuk", "1", "Algemene bepalingen"), ("Hoofdstuk", "2", "Verbod")],
        versions: &[
            FakeVersion {
                from: "2024-01-01",
                until: "2025-06-30",
                n: 0,
                real: None,
                articles: &[
                    FakeArticle {
                        division: 0,
                        number: "1",
                        title: Some("Begrippen"),
                        paragraphs: &[
                            "In deze wet wordt verstaan onder consumentenvuurwerk: vuurwerk voor particulieren.",
                        ],
                    },
                    FakeArticle {
                        division: 1,
                        number: "2",
                        title: None,
                        paragraphs: &[
                            "Het is verboden consumentenvuurwerk tot ontbranding te brengen.",
                            "Het eerste lid geldt niet op 31 december vanaf 18.00 uur tot 1 januari 02.00 uur.",
                        ],
                    },
                ],
            },
            FakeVersion {
                from: "2025-07-01",
                until: OPEN,
                n: 0,
                real: None,
                articles: &[
                    FakeArticle {
                        division: 0,
                        number: "1",
                        title: Some("Begrippen"),
                        paragraphs: &[
                            "In deze wet wordt verstaan onder consumentenvuurwerk: vuurwerk voor particulieren.",
                        ],
                    },
                    FakeArticle {
                        division: 1,
                        number: "2",
                        title: None,
                        paragraphs: &[
                            "Het is verboden consumentenvuurwerk tot ontbranding te brengen.",
                            "Het eerste lid geldt niet op 31 december vanaf 20.00 uur tot 1 januari 01.00 uur.",
                        ],
                    },
                    FakeArticle {
                        division: 1,
                        number: "3",
                        title: Some("Vuurwerkvrije zones"),
                        paragraphs: &[
                            "De burgemeester kan gebieden aanwijzen waar ook in de periode, bedoeld in artikel 2, \
                             tweede lid, geen consumentenvuurwerk tot ontbranding mag worden gebracht.",
                        ],
                    },
                ],
            },
        ],
    },
    FakeRegulation {
        id: "BWBR0048123",
        title: "Regeling verkooppunten consumentenvuurwerk",
        citation_title: "Regeling verkooppunten consumentenvuurwerk",
        kind: "ministeriele-regeling",
        authority: Some("Justitie en Veiligheid"),
        area: Some("Openbare orde"),
        divisions: &[],
        versions: &[FakeVersion {
            from: "2025-07-01",
            until: OPEN,
            n: 0,
            real: None,
            articles: &[FakeArticle {
                division: usize::MAX,
                number: "1",
                title: None,
                paragraphs: &[
                    "Consumentenvuurwerk wordt alleen verkocht op de door de burgemeester aangewezen plaatsen.",
                ],
            }],
        }],
    },
];

/// Every regulation the fake holds: the generated ones ([`REGULATIONS`]), then one per
/// real toestand's id in `corpus/bwb/` (see the module's invariants).
pub fn regulations() -> &'static [FakeRegulation] {
    static ALL: OnceLock<Vec<FakeRegulation>> = OnceLock::new();
    ALL.get_or_init(|| REGULATIONS.iter().copied().chain(real_regulations()).collect())
}

/// The real toestanden as regulations. Their texts are made `'static` once per process
/// (a few hundred bytes each, held as long as the corpus is): the fake's regulations are
/// `'static` data.
fn real_regulations() -> Vec<FakeRegulation> {
    // id → its toestanden (from, n, bytes), put in date order below.
    type Toestanden = Vec<(&'static str, u32, &'static [u8])>;
    let mut by_id: BTreeMap<&'static str, Toestanden> = BTreeMap::new();
    for file in real::bwb() {
        let mut parts = file.stem().split('_');
        let (Some(id), Some(from), Some(n), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
            panic!("{}: not named BWBR…_YYYY-MM-DD_N.xml", file.path);
        };
        let n: u32 = n
            .parse()
            .unwrap_or_else(|_| panic!("{}: no toestand number", file.path));
        by_id.entry(id).or_default().push((from, n, file.bytes));
    }
    by_id
        .into_iter()
        .map(|(id, mut found)| {
            found.sort();
            let versions: Vec<FakeVersion> = found
                .iter()
                .enumerate()
                .map(|(i, &(from, n, bytes))| FakeVersion {
                    from,
                    until: found.get(i + 1).map_or(OPEN, |next| leak(day_before(next.0))),
                    n,
                    articles: &[],
                    real: Some(bytes),
                })
                .collect();
            // The regulation is named as its latest toestand names it.
            let latest = found.last().map(|v| v.2).unwrap_or_default();
            // Read only as far as the title: the first answer must not wait for megabytes.
            let first = |name: &str| real::first_element(latest, name).unwrap_or_else(|e| panic!("{id}: {e}"));
            let title = ["citeertitel", "intitule"]
                .iter()
                .filter_map(|name| first(name))
                .map(|e| e.text_without(&["meta-data"], ""))
                .find(|t| !t.is_empty())
                .unwrap_or_else(|| panic!("{id}: a toestand without a title"));
            let wetgeving = real::first_tag(latest, "wetgeving").unwrap_or_else(|e| panic!("{id}: {e}"));
            let kind = wetgeving
                .as_ref()
                .and_then(|w| w.attribute("soort"))
                .unwrap_or_else(|| panic!("{id}: a toestand without `wetgeving soort`"))
                .to_owned();
            let title = leak(title);
            FakeRegulation {
                id,
                title,
                citation_title: title,
                kind: leak(kind),
                authority: None,
                area: None,
                divisions: &[],
                versions: Box::leak(versions.into_boxed_slice()),
            }
        })
        .collect()
}

/// The day before `date` (`YYYY-MM-DD`).
fn day_before(date: &str) -> String {
    let day = parse_date(date).unwrap_or_else(|| panic!("{date} is not a day"));
    (day - chrono::Days::new(1)).format("%Y-%m-%d").to_string()
}

/// The Basiswettenbestand among the regulation collections, known by its regulations.
impl RegulationFake for FakeRegulation {
    type Hit = (&'static FakeRegulation, &'static FakeVersion);
    const PLATFORM: PlatformId = PLATFORM;
    const CONNECTION: &'static str = "BWB";

    fn find(query: &str) -> Result<Vec<Self::Hit>, SruDiagnostic> {
        Ok(matches(&parse_cql(query)?))
    }

    /// A version's record (its `gzd`); what the regulation does not say is left out.
    fn record(root: &str, &(r, v): &Self::Hit) -> String {
        let authority = r
            .authority
            .map(|a| format!("<overheid:authority>{}</overheid:authority>", escape(a)))
            .unwrap_or_default();
        let area = r
            .area
            .map(|a| format!("<overheidbwb:rechtsgebied>{}</overheidbwb:rechtsgebied>", escape(a)))
            .unwrap_or_default();
        format!(
            "<gzd xmlns=\"http://standaarden.overheid.nl/sru\" xmlns:dcterms=\"http://purl.org/dc/terms/\" \
             xmlns:overheid=\"http://standaarden.overheid.nl/owms/terms/\" \
             xmlns:overheidbwb=\"http://standaarden.overheid.nl/bwb/terms/\"><originalData><overheidbwb:meta><owmskern>\
             <dcterms:identifier>{id}</dcterms:identifier><dcterms:title>{title}</dcterms:title>\
             <dcterms:type scheme=\"overheid:BWBType\">{kind}</dcterms:type><dcterms:language>nl</dcterms:language>\
             {authority}<dcterms:modified>{from}</dcterms:modified></owmskern>\
             <bwbipm><overheidbwb:toestand>http://wetten.overheid.nl/id/{id}/{from}/{n}</overheidbwb:toestand>{area}\
             <overheidbwb:geldigheidsperiode_startdatum>{from}</overheidbwb:geldigheidsperiode_startdatum>\
             <overheidbwb:geldigheidsperiode_einddatum>{until}</overheidbwb:geldigheidsperiode_einddatum>\
             </bwbipm></overheidbwb:meta></originalData><enrichedData>\
             <overheidbwb:locatie_toestand>{url}</overheidbwb:locatie_toestand></enrichedData></gzd>",
            id = r.id,
            title = escape(r.title),
            kind = escape(r.kind),
            from = v.from,
            n = v.n,
            until = v.until,
            url = escape(&toestand_url(root, r, v)),
        )
    }

    /// `/bwb/{id}/{from}_{n}/xml/{id}_{from}_{n}.xml`.
    fn file(id: &str, version: &str, file: &str) -> Option<Cow<'static, [u8]>> {
        let r = regulations().iter().find(|r| r.id == id)?;
        let named = |v: &&FakeVersion| {
            version == format!("{}_{}", v.from, v.n) && file == format!("{}_{}_{}.xml", r.id, v.from, v.n)
        };
        let v = r.versions.iter().find(named)?;
        Some(
            v.real
                .map_or_else(|| Cow::Owned(toestand_xml(r, v).into_bytes()), Cow::Borrowed),
        )
    }
}

/// One clause of the CQL the fake reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Clause {
    /// `overheidbwb.titel all|any "words"`.
    Title {
        /// All words (`all`, `=`) or any (`any`).
        all: bool,
        /// The words, lower case.
        words: Vec<String>,
    },
    /// `dcterms.type==value`.
    Kind(String),
    /// `overheid.authority=value` (containment).
    Authority(String),
    /// `overheidbwb.geldigheidsdatum==date`.
    InForce(String),
    /// `dcterms.identifier==id`.
    Identifier(String),
}

/// Reads the CQL the service takes: clauses `index relation value` joined by `and`, over
/// the indexes above.
pub fn parse_cql(query: &str) -> Result<Vec<Clause>, SruDiagnostic> {
    sru::clauses(query)?
        .into_iter()
        .map(|c| {
            let value = c.value;
            Ok(match (c.index.as_str(), c.relation) {
                ("overheidbwb.titel", "all" | "=" | "any") => Clause::Title {
                    all: c.relation != "any",
                    words: value.to_lowercase().split_whitespace().map(str::to_owned).collect(),
                },
                ("dcterms.type", "==" | "=") => Clause::Kind(value),
                ("overheid.authority", "==" | "=") => Clause::Authority(value.to_lowercase()),
                ("overheidbwb.geldigheidsdatum", "==" | "=") if sru::date_shaped(&value) => Clause::InForce(value),
                ("dcterms.identifier", "==" | "=") => Clause::Identifier(value),
                (
                    "overheidbwb.titel"
                    | "dcterms.type"
                    | "overheid.authority"
                    | "overheidbwb.geldigheidsdatum"
                    | "dcterms.identifier",
                    relation,
                ) => return Err(SruDiagnostic::syntax(&format!("{} {relation} \"{value}\"", c.index))),
                (other, _) => return Err(SruDiagnostic::standard(16, other, "Unsupported index")),
            })
        })
        .collect()
}

/// The (regulation, version) pairs `clauses` select, in the fake's order.
pub fn matches(clauses: &[Clause]) -> Vec<(&'static FakeRegulation, &'static FakeVersion)> {
    let mut out = Vec::new();
    let mut all: Vec<&'static FakeRegulation> = regulations().iter().collect();
    all.sort_by_key(|r| r.id);
    for r in all {
        let title_words: Vec<String> = format!("{} {}", r.title, r.citation_title)
            .to_lowercase()
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_owned)
            .collect();
        let regulation_ok = clauses.iter().all(|c| match c {
            Clause::Title { all, words } => {
                let has = |w: &String| title_words.contains(w);
                if *all {
                    words.iter().all(has)
                } else {
                    words.iter().any(has)
                }
            }
            Clause::Kind(k) => r.kind.eq_ignore_ascii_case(k),
            Clause::Authority(a) => r.authority.is_some_and(|x| x.to_lowercase().contains(a.as_str())),
            Clause::Identifier(id) => r.id == id,
            Clause::InForce(_) => true,
        });
        if !regulation_ok {
            continue;
        }
        for v in r.versions {
            let in_force = clauses.iter().all(|c| match c {
                Clause::InForce(d) => v.from <= d.as_str() && d.as_str() <= v.until,
                _ => true,
            });
            if in_force {
                out.push((r, v));
            }
        }
    }
    out
}

/// The URL of a version's toestand.
pub fn toestand_url(root: &str, r: &FakeRegulation, v: &FakeVersion) -> String {
    format!(
        "{root}/bwb/{id}/{from}_{n}/xml/{id}_{from}_{n}.xml",
        id = r.id,
        from = v.from,
        n = v.n
    )
}

/// A version's toestand XML.
pub fn toestand_xml(r: &FakeRegulation, v: &FakeVersion) -> String {
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<toestand bwb-id=\"{id}\" bwb-ng-vast-deel=\"{id}\" \
         inwerkingtreding=\"{from}\"><wetgeving soort=\"{kind}\"><intitule>{title}</intitule>\
         <citeertitel status=\"officieel\">{cite}</citeertitel><wet-besluit><wettekst>",
        id = r.id,
        from = v.from,
        kind = escape(r.kind),
        title = escape(r.title),
        cite = escape(r.citation_title),
    );
    // Divisions nest by their place in the list (a Titel inside the Hoofdstuk before it).
    let mut open: Vec<usize> = Vec::new();
    for a in v.articles {
        let chain: Vec<usize> = if a.division == usize::MAX {
            Vec::new()
        } else if r.divisions.get(a.division).is_some_and(|d| d.0 == "Titel") {
            vec![a.division - 1, a.division]
        } else {
            vec![a.division]
        };
        let tag = |i: usize| {
            if r.divisions[i].0 == "Titel" {
                "titeldeel"
            } else {
                "hoofdstuk"
            }
        };
        while open.iter().zip(&chain).filter(|(a, b)| a == b).count() < open.len() {
            let i = open.pop().unwrap_or_default();
            out.push_str(&format!("</{}>", tag(i)));
        }
        for &i in &chain[open.len()..] {
            let (label, nr, titel) = r.divisions[i];
            out.push_str(&format!(
                "<{}><kop><label>{label}</label><nr>{nr}</nr><titel>{}</titel></kop>",
                tag(i),
                escape(titel)
            ));
            open.push(i);
        }
        out.push_str(&article_xml(a.number, a.title, a.paragraphs, Numbered::Leden));
    }
    while let Some(i) = open.pop() {
        out.push_str(if r.divisions[i].0 == "Titel" {
            "</titeldeel>"
        } else {
            "</hoofdstuk>"
        });
    }
    out.push_str("</wettekst></wet-besluit></wetgeving></toestand>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_service_reads_the_clauses_it_knows_and_refuses_others() {
        let q = parse_cql("overheidbwb.titel all \"Wet and vuurwerk\" and overheidbwb.geldigheidsdatum==2025-01-01")
            .unwrap();
        assert_eq!(q.len(), 2);
        assert!(matches!(&q[0], Clause::Title { all: true, words } if words == &["wet", "and", "vuurwerk"]));
        for unknown in ["dcterms.title any \"x\"", "vuurwerk"] {
            assert_eq!(
                parse_cql(unknown).unwrap_err().uri,
                "info:srw/diagnostic/1/16",
                "{unknown}"
            );
        }
        for bad in [
            "overheidbwb.titel all \"x",
            "wet vuurwerk",
            "and",
            "overheidbwb.geldigheidsdatum==morgen",
            "overheidbwb.titel==x",
        ] {
            assert_eq!(parse_cql(bad).unwrap_err().uri, "info:srw/diagnostic/1/10", "{bad}");
        }
    }

    #[test]
    fn one_version_is_in_force_on_a_day_and_article_2_differs_between_them() {
        let law = REGULATIONS.iter().find(|r| r.id == FIREWORKS_LAW).unwrap();
        let (old, new) = (law.in_force("2025-01-01").unwrap(), law.in_force("2025-08-01").unwrap());
        assert_ne!(old.articles[1].paragraphs, new.articles[1].paragraphs);
        let hits = matches(
            &parse_cql("overheidbwb.titel all \"consumentenvuurwerk\" and overheidbwb.geldigheidsdatum==2025-01-01")
                .unwrap(),
        );
        assert_eq!(hits.iter().map(|(r, _)| r.id).collect::<Vec<_>>(), [FIREWORKS_LAW]);
        let xml = toestand_xml(law, new);
        assert!(xml.contains("<nr>3</nr><titel>Vuurwerkvrije zones</titel>"), "{xml}");
        let awb = toestand_xml(
            REGULATIONS.iter().find(|r| r.id == AWB).unwrap(),
            &REGULATIONS[0].versions[0],
        );
        assert!(
            awb.contains("<hoofdstuk><kop><label>Hoofdstuk</label><nr>1</nr>"),
            "{awb}"
        );
        assert!(
            awb.contains("<titeldeel><kop><label>Titel</label><nr>1.1</nr>"),
            "{awb}"
        );
        assert!(
            awb.ends_with("</titeldeel></hoofdstuk></wettekst></wet-besluit></wetgeving></toestand>\n"),
            "{awb}"
        );
    }

    #[test]
    fn every_real_toestand_is_a_version_found_as_the_service_finds_it() {
        let real: Vec<&FakeRegulation> = regulations().iter().filter(|r| r.versions[0].real.is_some()).collect();
        assert_eq!(
            real.len(),
            real::bwb().len(),
            "one regulation per real toestand (no id twice in the corpus)"
        );
        for r in &real {
            assert!(!REGULATIONS.iter().any(|g| g.id == r.id), "{} is also generated", r.id);
            let v = &r.versions[0];
            let root = real::first_tag(v.real.unwrap(), "toestand").unwrap().unwrap();
            assert_eq!(
                root.attribute("bwb-id"),
                Some(r.id),
                "the file is the toestand of its name"
            );
            assert_eq!(v.until, OPEN);
            let on_day = matches(
                &parse_cql(&format!(
                    "dcterms.identifier=={} and overheidbwb.geldigheidsdatum=={}",
                    r.id, v.from
                ))
                .unwrap(),
            );
            assert_eq!(on_day.len(), 1, "{}", r.id);
            assert!(
                matches(
                    &parse_cql(&format!(
                        "dcterms.identifier=={} and overheidbwb.geldigheidsdatum={}",
                        r.id,
                        day_before(v.from)
                    ))
                    .unwrap()
                )
                .is_empty()
            );
            let record = FakeRegulation::record("http://x", &(r, v));
            assert!(
                record.contains(&format!(
                    "<overheidbwb:locatie_toestand>http://x/bwb/{id}/{from}_{n}/xml/{id}_{from}_{n}.xml<",
                    id = r.id,
                    from = v.from,
                    n = v.n
                )),
                "{record}"
            );
            assert!(
                !record.contains("authority") && !record.contains("rechtsgebied"),
                "{record}"
            );
        }
        let zorgtoeslag = regulations().iter().find(|r| r.id == "BWBR0018451").unwrap();
        assert_eq!((zorgtoeslag.title, zorgtoeslag.kind), ("Wet op de zorgtoeslag", "wet"));
        assert_eq!(zorgtoeslag.in_force("2025-06-01").map(|v| v.from), Some("2025-01-01"));
        let mines = regulations().iter().find(|r| r.id == "BWBR0001821").unwrap();
        assert_eq!(mines.title, "Loi concernant les Mines, les Minières et les Carrières");
        assert_eq!(
            regulations().iter().find(|r| r.id == "BWBR0002458").unwrap().versions[0].n,
            1
        );
        assert_eq!(
            regulations().iter().find(|r| r.id == "BWBR0038456").unwrap().kind,
            "AMvB"
        );
        let found = matches(
            &parse_cql("overheidbwb.titel all \"zorgtoeslag\" and overheidbwb.geldigheidsdatum==2025-06-01").unwrap(),
        );
        assert_eq!(found.iter().map(|(r, _)| r.id).collect::<Vec<_>>(), ["BWBR0018451"]);
        assert_eq!(day_before("2025-03-01"), "2025-02-28");
    }
}
