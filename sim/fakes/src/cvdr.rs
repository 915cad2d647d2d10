//! Fake CVDR (`cvdr`): KOOP's SRU 1.2 search of local regulations
//! (`/sru/Search?operation=searchRetrieve&version=1.2&x-connection=cvdr&query=…`) and the
//! XML of each version (`/cvdr/{work}/{n}/xml/{work}_{n}.xml`), strict like the service
//! (`docs/platforms.md`, "Local regulations"), over generated regulations
//! ([`REGULATIONS`]) and the real ones of `corpus/cvdr/` ([`regulations`]). One of KOOP's
//! regulation collections, whose fake `regulation.rs` writes once: what is the CVDR's own
//! is here — its regulations, its CQL, its records and its files.
//!
//! Invariants:
//! - The envelope, the request's checks and the refusals are the shared SRU service's
//!   (HTTP 200 with a diagnostic and no count for another `x-connection` or a bad number
//!   `1/6`, another version `1/5`, a missing query `1/7`); this fake's own are its CQL —
//!   an unknown index (`1/16`; a bare term is `cql.serverChoice`, which this collection
//!   does not take), a clause it cannot parse (`1/10`), and, as the service does, a
//!   system error (`1/1`) for `AND`, `OR` or `NOT` in capitals inside a quoted value —
//!   and its records.
//! - One record per version: without `overheidrg.datumGeldendOp` every version of a
//!   regulation matches; with it, the one in force on that day. Records come in
//!   identifier order, then by version.
//! - `keyword` matches whole words of the title and the text, `dcterms.creator` the
//!   organisation's name as whole words next to each other (so `Utrecht` is the
//!   municipality and the province, not `Utrechtse Heuvelrug`), ignoring case.
//! - A real regulation's record is built from its own `<meta>`: identifier (the old
//!   export's `112779_1` written `CVDR112779_1`, as the service names it), title, creator
//!   and its kind of organisation (the creator's `scheme`), legal bases, subject, dates,
//!   publication, reference and what it changed; its XML is served at the record's
//!   `publicatieurl_xml` as the file is, byte for byte.
//!
//! Settings ([`crate::ZoekserviceSettings`]): the service's own trouble by count of searches — every
//! n-th answered with a syntax diagnostic, or with a system diagnostic and no count.
//!
//! What this fake does not do: `sortBy`, relations other than `=`, `==`, `all`, `any`,
//! `or`/`not`, or regulations beyond these.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::sync::OnceLock;

use besluitbron_core::{Platform, PlatformId};

use crate::real::{self, Element, RealFile};
use crate::regulation::{self, Numbered, RegulationFake, article_xml, leak};
use crate::sru::{self, SruDiagnostic, escape};

/// The search's path under the fake's root.
pub const SRU_PATH: &str = regulation::SRU_PATH;

/// The platform this fake imitates (its short id and public name, as the server's
/// connector declares them).
pub const PLATFORM: PlatformId = PlatformId::of(&Platform {
    id: "cvdr",
    name: "Lokale regelgeving (CVDR)",
});

/// The CVDR fake, as its registry line names it.
pub(crate) type Fake = regulation::Fake<FakeRegulation>;

/// One article of a version.
#[derive(Clone, Copy, Debug)]
pub struct FakeArticle {
    /// Its number.
    pub number: &'static str,
    /// Its heading's title, if any.
    pub title: Option<&'static str>,
    /// Its paragraphs (list items numbered `1.`, `2.` when there is more than one).
    pub paragraphs: &'static [&'static str],
}

/// One version of a regulation.
#[derive(Clone, Copy, Debug)]
pub struct FakeVersion {
    /// Its number (`_2`).
    pub n: u32,
    /// In force from.
    pub from: &'static str,
    /// In force until, when an end is set.
    pub until: Option<&'static str>,
    /// The day the decision that set it was taken.
    pub issued: Option<&'static str>,
    /// The publication that made it known.
    pub published_in: Option<&'static str>,
    /// The organisation's reference.
    pub reference: Option<&'static str>,
    /// What it changed.
    pub concerns: Option<&'static str>,
    /// Last changed (`None`: the day it came into force).
    pub modified: Option<&'static str>,
    /// Its articles (none for a real regulation: its text is its file).
    pub articles: &'static [FakeArticle],
    /// A real regulation's file and the words of its text (`None`: generated).
    pub real: Option<RealText>,
}

/// A real regulation's file, byte for byte, and its text (outside `<meta>`) for `keyword`.
#[derive(Clone, Copy, Debug)]
pub struct RealText {
    /// The file.
    pub bytes: &'static [u8],
    /// Its text, element boundaries as spaces.
    pub text: &'static str,
}

/// A regulation of the fake's data.
#[derive(Clone, Copy, Debug)]
pub struct FakeRegulation {
    /// CVDR work id.
    pub work: &'static str,
    /// Title.
    pub title: &'static str,
    /// Kind (the second `dcterms:type`; `None`: only the generic `regeling`).
    pub kind: Option<&'static str>,
    /// `dcterms:creator`.
    pub creator: &'static str,
    /// `organisatietype`.
    pub organisation_type: &'static str,
    /// Legal basis, each `dcterms:source`.
    pub legal_basis: &'static [&'static str],
    /// Subject.
    pub subject: Option<&'static str>,
    /// Its versions, oldest first.
    pub versions: &'static [FakeVersion],
}

impl FakeRegulation {
    /// The version in force on `date`.
    pub fn in_force(&self, date: &str) -> Option<&FakeVersion> {
        self.versions.iter().find(|v| in_force(v, date))
    }

    /// The versioned id of `v`.
    pub fn id(&self, v: &FakeVersion) -> String {
        format!("{}_{}", self.work, v.n)
    }
}

fn in_force(v: &FakeVersion, date: &str) -> bool {
    v.from <= date && v.until.is_none_or(|u| date <= u)
}

/// Gemeente Utrecht's parking regulation, whose article 2 changed on 2025-01-01.
pub const UTRECHT_PARKING: &str = "CVDR700001";

/// The fake's generated regulations (the real ones: [`regulations`]).
pub static REGULATIONS: &[FakeRegulation] = &[
    FakeRegulation {
        work: UTRECHT_PARKING,
        title: "Parkeerverordening Utrecht",
        kind: Some("verordening"),
        creator: "Utrecht",
        organisation_type: "Gemeente",
        legal_basis: &["Gemeentewet, artikel 225"],
        subject: Some("verkeer en vervoer"),
        versions: &[
            FakeVersion {
                n: 1,
                from: "2023-01-01",
                until: Some("2024-12-31"),
                issued: Some("2022-11-10"),
                published_in: Some("Gemeenteblad 2022, 480001"),
                reference: Some("RIS 2022-0815"),
                concerns: Some("nieuwe regeling"),
                modified: None,
                real: None,
                articles: &[
                    FakeArticle {
                        number: "1",
                        title: Some("Begripsbepalingen"),
                        paragraphs: &[
                            "In deze verordening wordt verstaan onder parkeren: het doen of laten staan van \
                                       een voertuig.",
                        ],
                    },
                    FakeArticle {
                        number: "2",
                        title: Some("Parkeervergunning"),
                        paragraphs: &[
                            "Het college kan een parkeervergunning verlenen aan een bewoner van het gebied.",
                            "Per adres wordt ten hoogste twee vergunningen verleend.",
                        ],
                    },
                ],
            },
            FakeVersion {
                n: 2,
                from: "2025-01-01",
                until: None,
                issued: Some("2024-11-14"),
                published_in: Some("Gemeenteblad 2024, 512345"),
                reference: Some("RIS 2024-1107"),
                concerns: Some("wijziging artikel 2"),
                modified: None,
                real: None,
                articles: &[
                    FakeArticle {
                        number: "1",
                        title: Some("Begripsbepalingen"),
                        paragraphs: &[
                            "In deze verordening wordt verstaan onder parkeren: het doen of laten staan van \
                                       een voertuig.",
                        ],
                    },
                    FakeArticle {
                        number: "2",
                        title: Some("Parkeervergunning"),
                        paragraphs: &[
                            "Het college kan een parkeervergunning verlenen aan een bewoner van het gebied.",
                            "Per adres wordt ten hoogste één vergunning verleend.",
                        ],
                    },
                ],
            },
        ],
    },
    FakeRegulation {
        work: "CVDR700002",
        title: "Verordening parkeren en verkeer provinciale wegen Utrecht",
        kind: Some("verordening"),
        creator: "Utrecht",
        organisation_type: "Provincie",
        legal_basis: &["Provinciewet, artikel 145"],
        subject: Some("verkeer en vervoer"),
        versions: &[FakeVersion {
            n: 1,
            from: "2024-04-01",
            until: None,
            issued: Some("2024-02-12"),
            published_in: Some("Provinciaal blad 2024, 2001"),
            reference: Some("PS2024MM05"),
            concerns: Some("nieuwe regeling"),
            modified: None,
            real: None,
            articles: &[FakeArticle {
                number: "1",
                title: None,
                paragraphs: &["Het is verboden te parkeren in de berm van een provinciale weg."],
            }],
        }],
    },
    FakeRegulation {
        work: "CVDR700003",
        title: "Parkeerverordening Utrechtse Heuvelrug",
        kind: Some("verordening"),
        creator: "Utrechtse Heuvelrug",
        organisation_type: "Gemeente",
        legal_basis: &["Gemeentewet, artikel 225"],
        subject: Some("verkeer en vervoer"),
        versions: &[FakeVersion {
            n: 1,
            from: "2021-07-01",
            until: None,
            issued: Some("2021-05-27"),
            published_in: Some("Gemeenteblad 2021, 150150"),
            reference: Some("Z/21/001"),
            concerns: Some("nieuwe regeling"),
            modified: None,
            real: None,
            articles: &[FakeArticle {
                number: "1",
                title: None,
                paragraphs: &[
                    "Parkeren op een parkeerplaats voor vergunninghouders is voorbehouden aan \
                               vergunninghouders.",
                ],
            }],
        }],
    },
    FakeRegulation {
        work: "CVDR700004",
        title: "Afvalstoffenverordening Amersfoort 2024",
        kind: Some("verordening"),
        creator: "Amersfoort",
        organisation_type: "Gemeente",
        legal_basis: &["Wet milieubeheer, artikel 10.23"],
        subject: Some("milieu"),
        versions: &[FakeVersion {
            n: 1,
            from: "2024-01-01",
            until: None,
            issued: Some("2023-12-12"),
            published_in: Some("Gemeenteblad 2023, 540002"),
            reference: Some("6543210"),
            concerns: Some("nieuwe regeling"),
            modified: None,
            real: None,
            articles: &[FakeArticle {
                number: "1",
                title: Some("Inzameling"),
                paragraphs: &["Huishoudelijke afvalstoffen worden wekelijks ingezameld."],
            }],
        }],
    },
    FakeRegulation {
        work: "CVDR700005",
        title: "Keur Waterschap Rivierenland 2022",
        kind: Some("verordening"),
        creator: "Waterschap Rivierenland",
        organisation_type: "Waterschap",
        legal_basis: &["Waterschapswet, artikel 78"],
        subject: Some("water"),
        versions: &[FakeVersion {
            n: 1,
            from: "2022-03-01",
            until: None,
            issued: Some("2022-01-28"),
            published_in: Some("Waterschapsblad 2022, 1200"),
            reference: Some("AB 2022-04"),
            concerns: Some("nieuwe regeling"),
            modified: None,
            real: None,
            articles: &[FakeArticle {
                number: "1",
                title: None,
                paragraphs: &["Het is verboden zonder vergunning te parkeren of te bouwen op een waterkering."],
            }],
        }],
    },
    FakeRegulation {
        work: "CVDR700006",
        title: "Verordening mantelzorgwaardering Den Haag 2025",
        kind: Some("beleidsregel"),
        creator: "'s-Gravenhage",
        organisation_type: "Gemeente",
        legal_basis: &["Wet maatschappelijke ondersteuning 2015, artikel 2.1.6"],
        subject: Some("zorg en gezondheid"),
        versions: &[FakeVersion {
            n: 1,
            from: "2025-01-01",
            until: None,
            issued: Some("2024-12-05"),
            published_in: Some("Gemeenteblad 2024, 520600"),
            reference: Some("RIS319000"),
            concerns: Some("nieuwe regeling"),
            modified: None,
            real: None,
            articles: &[FakeArticle {
                number: "1",
                title: None,
                paragraphs: &["Een mantelzorger ontvangt jaarlijks een waardering."],
            }],
        }],
    },
];

/// Every regulation the fake holds: the generated ones ([`REGULATIONS`]), then the real
/// ones of `corpus/cvdr/` (see the module's invariants).
pub fn regulations() -> &'static [FakeRegulation] {
    static ALL: OnceLock<Vec<FakeRegulation>> = OnceLock::new();
    ALL.get_or_init(|| REGULATIONS.iter().copied().chain(real_regulations()).collect())
}

/// One real regulation version, as its `<meta>` says (owned, before it is made `'static`).
struct RealVersion {
    work: String,
    n: u32,
    title: String,
    kinds: Vec<String>,
    creator: String,
    organisation_type: String,
    legal_basis: Vec<String>,
    subject: Option<String>,
    from: String,
    until: Option<String>,
    issued: Option<String>,
    published_in: Option<String>,
    reference: Option<String>,
    concerns: Option<String>,
    modified: Option<String>,
    real: RealText,
}

/// The real regulations, one per work, its versions in order. Their texts are made
/// `'static` once per process (held as long as the corpus is): the fake's regulations are
/// `'static` data.
fn real_regulations() -> Vec<FakeRegulation> {
    let leak_opt = |s: Option<String>| s.map(leak);
    let mut by_work: BTreeMap<String, Vec<RealVersion>> = BTreeMap::new();
    for file in real::cvdr() {
        let v = real_version(file);
        by_work.entry(v.work.clone()).or_default().push(v);
    }
    by_work
        .into_values()
        .map(|mut found| {
            found.sort_by_key(|v| v.n);
            // The regulation is described as its latest version describes it.
            let latest = found.last().expect("a work has a version");
            let legal_basis: Vec<&'static str> = latest.legal_basis.iter().cloned().map(leak).collect();
            let regulation = FakeRegulation {
                work: leak(latest.work.clone()),
                title: leak(latest.title.clone()),
                kind: latest.kinds.first().cloned().map(leak),
                creator: leak(latest.creator.clone()),
                organisation_type: leak(latest.organisation_type.clone()),
                legal_basis: Box::leak(legal_basis.into_boxed_slice()),
                subject: leak_opt(latest.subject.clone()),
                versions: &[],
            };
            let versions: Vec<FakeVersion> = found
                .into_iter()
                .map(|v| FakeVersion {
                    n: v.n,
                    from: leak(v.from),
                    until: leak_opt(v.until),
                    issued: leak_opt(v.issued),
                    published_in: leak_opt(v.published_in),
                    reference: leak_opt(v.reference),
                    concerns: leak_opt(v.concerns),
                    modified: leak_opt(v.modified),
                    articles: &[],
                    real: Some(v.real),
                })
                .collect();
            FakeRegulation {
                versions: Box::leak(versions.into_boxed_slice()),
                ..regulation
            }
        })
        .collect()
}

/// A real regulation's version, read from its `<meta>` (the corpus's files all parse and
/// have one, with an identifier, a title, a creator and a day it came into force; a test
/// says so).
fn real_version(file: &'static RealFile) -> RealVersion {
    let doc = real::parse(file.bytes).unwrap_or_else(|e| panic!("{}: {e}", file.path));
    let meta = doc.find("meta").unwrap_or_else(|| panic!("{}: no <meta>", file.path));
    let text = |e: &Element| e.text_without(&[], " ");
    let one = |name: &str| meta.find(name).map(text).filter(|t| !t.is_empty());
    let all = |name: &str| {
        let mut found = Vec::new();
        meta.find_all(name, &mut found);
        found
            .into_iter()
            .map(text)
            .filter(|t| !t.is_empty())
            .collect::<Vec<_>>()
    };
    let needed = |name: &str| one(name).unwrap_or_else(|| panic!("{}: no {name} in <meta>", file.path));
    let identifier = needed("identifier");
    // The old export writes `112779_1`; the service names it `CVDR112779_1`.
    let identifier = if identifier.starts_with("CVDR") {
        identifier
    } else {
        format!("CVDR{identifier}")
    };
    let (work, n) = identifier
        .split_once('_')
        .and_then(|(w, n)| Some((w.to_owned(), n.parse().ok()?)))
        .unwrap_or_else(|| panic!("{}: the identifier {identifier} has no version", file.path));
    let creator = meta
        .find("creator")
        .unwrap_or_else(|| panic!("{}: no creator in <meta>", file.path));
    // `scheme="overheid:Gemeente"`: the kind of organisation.
    let organisation_type = creator
        .attribute("scheme")
        .map(|s| s.rsplit(':').next().unwrap_or(s).to_owned())
        .unwrap_or_default();
    RealVersion {
        work,
        n,
        title: needed("title"),
        kinds: all("type")
            .into_iter()
            .filter(|t| !t.eq_ignore_ascii_case("regeling"))
            .collect(),
        creator: text(creator),
        organisation_type,
        legal_basis: all("source"),
        subject: one("subject"),
        from: needed("inwerkingtredingDatum"),
        until: one("uitwerkingtredingDatum"),
        issued: one("issued"),
        published_in: one("isFormatOf"),
        reference: one("kenmerk"),
        concerns: one("betreft"),
        modified: one("modified"),
        real: RealText {
            bytes: file.bytes,
            text: leak(doc.text_without(&["meta"], " ")),
        },
    }
}

/// The CVDR among the regulation collections, known by its regulations.
impl RegulationFake for FakeRegulation {
    type Hit = (&'static FakeRegulation, &'static FakeVersion);
    const PLATFORM: PlatformId = PLATFORM;
    const CONNECTION: &'static str = "cvdr";

    fn find(query: &str) -> Result<Vec<Self::Hit>, SruDiagnostic> {
        Ok(matches(&parse_cql(query)?))
    }

    /// A version's record (its `gzd`); what the regulation does not say is left out.
    fn record(root: &str, &(r, v): &Self::Hit) -> String {
        let element = |name: &str, value: Option<&str>| {
            value
                .map(|x| format!("<{name}>{}</{name}>", escape(x), name = name))
                .unwrap_or_default()
        };
        let kind = r
            .kind
            .map(|k| {
                format!(
                    "<dcterms:type scheme=\"overheidrg:Rubriek\">{}</dcterms:type>",
                    escape(k)
                )
            })
            .unwrap_or_default();
        let sources: String = r
            .legal_basis
            .iter()
            .map(|s| element("dcterms:source", Some(s)))
            .collect();
        let published = v
            .published_in
            .map(|p| {
                format!(
                    "<dcterms:isFormatOf resourceIdentifier=\"\">{}</dcterms:isFormatOf>",
                    escape(p)
                )
            })
            .unwrap_or_default();
        let id = r.id(v);
        format!(
            "<gzd xmlns=\"http://standaarden.overheid.nl/sru\" xmlns:dcterms=\"http://purl.org/dc/terms/\" \
             xmlns:overheid=\"http://standaarden.overheid.nl/owms/terms/\" \
             xmlns:overheidrg=\"http://standaarden.overheid.nl/cvdr/terms/\"><originalData><overheidrg:meta><owmskern>\
             <dcterms:identifier>{id}</dcterms:identifier><dcterms:title>{title}</dcterms:title>\
             <dcterms:language>nl</dcterms:language>\
             <dcterms:type scheme=\"overheid:Informatietype\">regeling</dcterms:type>{kind}\
             <dcterms:creator scheme=\"overheid:{otype}\">{creator}</dcterms:creator>\
             <dcterms:modified>{modified}</dcterms:modified></owmskern><owmsmantel>\
             {published}{sources}{subject}{issued}</owmsmantel><cvdripm>\
             <overheidrg:inwerkingtredingDatum>{from}</overheidrg:inwerkingtredingDatum>{until}{concerns}{reference}\
             </cvdripm></overheidrg:meta></originalData><enrichedData><organisatietype>{otype}</organisatietype>\
             <publicatieurl_xhtml>{xhtml}</publicatieurl_xhtml><publicatieurl_xml>{url}</publicatieurl_xml>\
             <preferred_url>https://lokaleregelgeving.overheid.nl/{work}/{n}</preferred_url>\
             <preferred_work_url>https://lokaleregelgeving.overheid.nl/{work}</preferred_work_url>\
             </enrichedData></gzd>",
            title = escape(r.title),
            otype = escape(r.organisation_type),
            creator = escape(r.creator),
            modified = v.modified.map_or_else(|| format!("{}Z", v.from), escape),
            subject = element("dcterms:subject", r.subject),
            issued = element("dcterms:issued", v.issued),
            from = escape(v.from),
            until = element("overheidrg:uitwerkingtredingDatum", v.until),
            concerns = element("overheidrg:betreft", v.concerns),
            reference = element("overheidrg:kenmerk", v.reference),
            xhtml = escape(
                &text_url(root, r, v)
                    .replace("/xml/", "/xhtml/")
                    .replace(".xml", ".html")
            ),
            url = escape(&text_url(root, r, v)),
            work = r.work,
            n = v.n,
        )
    }

    /// `/cvdr/{work}/{n}/xml/{work}_{n}.xml`: the versioned id's file.
    fn file(work: &str, n: &str, file: &str) -> Option<Cow<'static, [u8]>> {
        let (r, v) = regulations()
            .iter()
            .filter(|r| r.work == work)
            .flat_map(|r| r.versions.iter().map(move |v| (r, v)))
            .find(|(r, v)| n == v.n.to_string() && file == format!("{}.xml", r.id(v)))?;
        Some(match v.real {
            Some(real) => Cow::Borrowed(real.bytes),
            None => Cow::Owned(text_xml(r, v).into_bytes()),
        })
    }
}

/// One clause of the CQL the fake reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Clause {
    /// `keyword all|any|= "words"`: words of the title and the text.
    Keyword {
        /// All words, or any.
        all: bool,
        /// The words, lower case.
        words: Vec<String>,
    },
    /// `dcterms.title all|any|= "words"`.
    Title {
        /// All words, or any.
        all: bool,
        /// The words, lower case.
        words: Vec<String>,
    },
    /// `dcterms.creator="name"`: the name's words, together, in the creator.
    Creator(Vec<String>),
    /// `organisatieType=value`.
    OrganisationType(String),
    /// `overheidrg.datumGeldendOp=date`.
    InForce(String),
    /// `dcterms.identifier=CVDR…_n`.
    Identifier(String),
    /// `workid=CVDR…`.
    Work(String),
}

/// Lower-case words of `text`, split on anything but letters, digits, `'` and `-`.
fn words_of(text: &str) -> Vec<String> {
    text.to_lowercase()
        .split(|c: char| !(c.is_alphanumeric() || c == '\'' || c == '-'))
        .filter(|w| !w.is_empty())
        .map(str::to_owned)
        .collect()
}

/// Reads the CQL the service takes: clauses `index relation value` joined by `and`, over
/// the indexes above.
pub fn parse_cql(query: &str) -> Result<Vec<Clause>, SruDiagnostic> {
    let mut out = Vec::new();
    for c in sru::clauses(query)? {
        let value = c.value;
        if value.split_whitespace().any(|w| matches!(w, "AND" | "OR" | "NOT")) {
            // The service's back end reads these as operators even inside quotes.
            return Err(SruDiagnostic::standard(1, &value, "General system error"));
        }
        let equal = matches!(c.relation, "=" | "==");
        let clause = match c.index.as_str() {
            "keyword" | "dcterms.title" if c.relation != "==" => {
                let all = c.relation != "any";
                let words = words_of(&value);
                if c.index == "keyword" {
                    Clause::Keyword { all, words }
                } else {
                    Clause::Title { all, words }
                }
            }
            "dcterms.creator" if equal => Clause::Creator(words_of(&value)),
            "organisatieType" if equal => Clause::OrganisationType(value),
            "overheidrg.datumGeldendOp" if equal && sru::date_shaped(&value) => Clause::InForce(value),
            "dcterms.identifier" if equal => Clause::Identifier(value),
            "workid" if equal => Clause::Work(value),
            "keyword"
            | "dcterms.title"
            | "dcterms.creator"
            | "organisatieType"
            | "overheidrg.datumGeldendOp"
            | "dcterms.identifier"
            | "workid" => {
                return Err(SruDiagnostic::syntax(&format!(
                    "{} {} \"{value}\"",
                    c.index, c.relation
                )));
            }
            other => return Err(SruDiagnostic::standard(16, other, "Unsupported index")),
        };
        out.push(clause);
    }
    Ok(out)
}

/// Whether `needle` occurs in `hay` as whole words next to each other.
fn together(hay: &[String], needle: &[String]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// The (regulation, version) pairs `clauses` select, in the fake's order.
pub fn matches(clauses: &[Clause]) -> Vec<(&'static FakeRegulation, &'static FakeVersion)> {
    let mut out = Vec::new();
    let mut all: Vec<&'static FakeRegulation> = regulations().iter().collect();
    all.sort_by_key(|r| r.work);
    for r in all {
        let title = words_of(r.title);
        let creator = words_of(r.creator);
        for v in r.versions {
            let id = r.id(v);
            let mut text = title.clone();
            match v.real {
                Some(real) => text.extend(words_of(real.text)),
                None => {
                    for a in v.articles {
                        for p in a.paragraphs {
                            text.extend(words_of(p));
                        }
                    }
                }
            }
            let has = |hay: &[String], all: bool, words: &[String]| {
                let one = |w: &String| hay.contains(w);
                if all {
                    words.iter().all(one)
                } else {
                    words.iter().any(one)
                }
            };
            let ok = clauses.iter().all(|c| match c {
                Clause::Keyword { all, words } => has(&text, *all, words),
                Clause::Title { all, words } => has(&title, *all, words),
                Clause::Creator(name) => together(&creator, name),
                Clause::OrganisationType(t) => r.organisation_type.eq_ignore_ascii_case(t),
                Clause::InForce(d) => in_force(v, d),
                Clause::Identifier(i) => id.eq_ignore_ascii_case(i),
                Clause::Work(w) => r.work.eq_ignore_ascii_case(w),
            });
            if ok {
                out.push((r, v));
            }
        }
    }
    out
}

/// The URL of a version's XML.
pub fn text_url(root: &str, r: &FakeRegulation, v: &FakeVersion) -> String {
    format!("{root}/cvdr/{work}/{n}/xml/{work}_{n}.xml", work = r.work, n = v.n)
}

/// A version's XML: `cvdr` with its `meta` and the regulation's `body`.
pub fn text_xml(r: &FakeRegulation, v: &FakeVersion) -> String {
    let mut out = format!(
        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<cvdr xmlns:dcterms=\"http://purl.org/dc/terms/\"><meta><owmskern>\
         <dcterms:identifier>{id}</dcterms:identifier><dcterms:title>{title}</dcterms:title>\
         <dcterms:creator>{creator}</dcterms:creator></owmskern></meta><body><regeling><aanhef><al>{creator} \
         besluit:</al></aanhef><regeling-tekst>",
        id = r.id(v),
        title = escape(r.title),
        creator = escape(r.creator),
    );
    for a in v.articles {
        out.push_str(&article_xml(a.number, a.title, a.paragraphs, Numbered::List));
    }
    out.push_str("</regeling-tekst></regeling></body></cvdr>\n");
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(query: &str) -> Vec<String> {
        matches(&parse_cql(query).unwrap())
            .iter()
            .map(|(r, v)| r.id(v))
            .collect()
    }

    fn uri(query: &str) -> String {
        parse_cql(query).unwrap_err().uri
    }

    #[test]
    fn the_service_reads_the_clauses_it_knows_and_refuses_others() {
        assert_eq!(parse_cql("parkeren").unwrap_err().details, "cql.serverChoice");
        assert_eq!(uri("dcterms.subject=water"), "info:srw/diagnostic/1/16");
        assert_eq!(uri("keyword all \"parkeren OR fietsen\""), "info:srw/diagnostic/1/1");
        for bad in [
            "keyword all \"x",
            "and",
            "overheidrg.datumGeldendOp=morgen",
            "keyword < x",
        ] {
            assert_eq!(uri(bad), "info:srw/diagnostic/1/10", "{bad}");
        }
    }

    #[test]
    fn a_creator_is_whole_words_and_a_day_selects_one_version() {
        assert_eq!(
            ids("dcterms.creator=\"Utrecht\" and overheidrg.datumGeldendOp=2025-06-01"),
            ["CVDR700001_2", "CVDR700002_1"]
        );
        assert_eq!(
            ids(
                "keyword all \"parkeren\" and dcterms.creator=\"Utrecht\" and organisatieType=\"Gemeente\" \
                 and overheidrg.datumGeldendOp=2024-06-01"
            ),
            ["CVDR700001_1"]
        );
        assert_eq!(ids("workid=\"CVDR700001\""), ["CVDR700001_1", "CVDR700001_2"]);
        let law = &REGULATIONS[0];
        let xml = text_xml(law, &law.versions[1]);
        assert!(
            xml.contains("<li nr=\"2.\"><al>Per adres wordt ten hoogste één vergunning"),
            "{xml}"
        );
        assert!(xml.starts_with("<?xml") && xml.contains("<cvdr "), "{xml}");
    }

    #[test]
    fn every_real_regulation_is_found_by_its_own_meta() {
        let real: Vec<&FakeRegulation> = regulations().iter().filter(|r| r.versions[0].real.is_some()).collect();
        assert_eq!(real.len(), real::cvdr().len(), "one work per real file");
        for r in &real {
            assert!(
                !REGULATIONS.iter().any(|g| g.work == r.work),
                "{} is also generated",
                r.work
            );
            for v in r.versions {
                assert_eq!(ids(&format!("dcterms.identifier=\"{}\"", r.id(v))), [r.id(v)]);
                assert_eq!(
                    ids(&format!(
                        "workid=\"{}\" and overheidrg.datumGeldendOp={}",
                        r.work, v.from
                    )),
                    [r.id(v)]
                );
            }
        }
        // The old export's id, as the service names it.
        let old = real
            .iter()
            .find(|r| r.work == "CVDR112779")
            .expect("112779_1 as CVDR112779");
        assert_eq!((old.creator, old.organisation_type), ("Spijkenisse", "Gemeente"));
        assert_eq!(
            (old.versions[0].from, old.versions[0].until),
            ("2011-09-14", Some("2012-04-25"))
        );
        let record = FakeRegulation::record("http://x", &(old, &old.versions[0]));
        assert!(
            record.contains("<dcterms:identifier>CVDR112779_1</dcterms:identifier>"),
            "{record}"
        );
        assert!(
            record.contains("<publicatieurl_xml>http://x/cvdr/CVDR112779/1/xml/CVDR112779_1.xml</publicatieurl_xml>"),
            "{record}"
        );
        assert!(record.contains("<dcterms:source>Verordening persoonsinformatievoorziening Spijkenisse 2010, art. 4, 9 en 10</dcterms:source>"), "{record}");
        assert!(!record.contains("Rubriek"), "no kind the file does not give: {record}");
        let chapters = real.iter().find(|r| r.work == "CVDR100394").unwrap();
        assert_eq!(chapters.title, "Beleidsregels verkeersveiligheid en parkeren");
        assert_eq!(
            chapters.legal_basis,
            [
                "Reglement verkeersregels en verkeertekens 1990",
                "Parkeerverordening gemeente Kampen"
            ]
        );
        assert_eq!(chapters.versions[0].modified, Some("2016-10-26"));
        // Its text's words are searched, not its metadata's.
        assert_eq!(
            ids("keyword all \"verkeersveiligheid\" and dcterms.creator=\"Kampen\""),
            ["CVDR100394_2"]
        );
        assert!(
            ids("keyword all \"16ADV00361\"").is_empty(),
            "a kenmerk is metadata, not text"
        );
    }
}
