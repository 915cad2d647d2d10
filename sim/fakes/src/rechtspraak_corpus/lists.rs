//! The value lists the fake serves: about two hundred courts (most of them ended,
//! historic identifiers in the psi form with spaces), the areas of law nested one deep,
//! and the kinds of procedure; fixed, as the real service's are.
//!
//! What it does not do: generate rulings (`generator.rs`).

use super::records::{AREA, OWMS, PSI, RsArea, RsCourt};

pub(super) const TOWNS: &[&str] = &[
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

pub(super) const ACTIVE: &[(&str, &str, &str, &str)] = &[
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
pub(super) const PUBLISHING: std::ops::Range<usize> = 0..20;

pub(super) const ENDED_RECHTBANKEN: &[(&str, &str)] = &[
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

pub(super) const AMBTENARENGERECHTEN: &[(&str, &str)] = &[
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
pub(super) type AreaTree = (&'static str, &'static str, &'static [(&'static str, &'static str)]);

pub(super) const AREAS: &[AreaTree] = &[
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

pub(super) const PROCEDURES: &[(&str, &str)] = &[
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

pub(super) fn courts() -> Vec<RsCourt> {
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

pub(super) fn areas() -> Vec<RsArea> {
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
