//! An `organization` as the assistant writes it — a key (`gemeente-utrecht`), a name
//! (`Gemeente Utrecht`, `gemeente utrecht`) or a place (`Amersfoort`) — read against
//! BesluitBron's list of the organisations whose regulations the CVDR holds, before the
//! platform is asked: the platform names an organisation by its bare name
//! (`dcterms.creator`: `Utrecht` for the municipality and the province alike) and its
//! `organisatieType`, so a name must be resolved to both, and a name that fits several is
//! the caller's to choose (asking the platform for each would cost calls of the lane all
//! sessions share).
//!
//! [`resolve`]: an exact key (any case) is that organisation; a name that equals one
//! organisation's name, creator or key (words compared without case, accents or
//! punctuation) is that one; otherwise the organisations whose name holds the asked
//! words as whole words, narrowed to a kind (`gemeente`, `provincie`, `waterschap`) when
//! the asked words start with one: one is it, several are [`Resolved::Ambiguous`], none
//! is [`Resolved::Unknown`] with the closest names. Nothing here asks the platform.
//!
//! The list: the 342 municipalities of 1 January 2025 (CBS), the twelve provinces and
//! the 21 water boards, by the names the CVDR writes where they differ from the everyday
//! one (`'s-Gravenhage` for Den Haag, `Bergen (NH)` and `Bergen (L)`); see
//! `docs/platforms.md` for which spellings are confirmed.

use std::sync::LazyLock;

use crate::connectors::ask::{Resolution, of_candidates};
use crate::connectors::offers::{Choice, words};
use crate::platforms::cvdr::Organisation;

/// One organisation the list knows.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Org {
    /// BesluitBron's key: `gemeente-utrecht`, `waterschap-rivierenland`.
    pub key: String,
    /// The name people use: `Gemeente Den Haag`.
    pub label: String,
    /// The platform's names for it.
    pub platform: Organisation,
}

/// What an asked organization is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Resolved {
    /// This organisation.
    One(Org),
    /// Several fit (at most [`MAX_CANDIDATES`], best first).
    Ambiguous(Vec<Org>),
    /// None fits; these are the closest (at most five, best first).
    Unknown(Vec<Org>),
}

/// The most candidates an answer lists.
pub const MAX_CANDIDATES: usize = 8;

/// The municipalities as the CVDR names them (`dcterms.creator`), with the everyday
/// name where it differs.
const MUNICIPALITIES: &[(&str, Option<&str>)] = &[
    ("'s-Gravenhage", Some("Den Haag")),
    ("'s-Hertogenbosch", None),
    ("Aa en Hunze", None),
    ("Aalsmeer", None),
    ("Aalten", None),
    ("Achtkarspelen", None),
    ("Alblasserdam", None),
    ("Albrandswaard", None),
    ("Alkmaar", None),
    ("Almelo", None),
    ("Almere", None),
    ("Alphen aan den Rijn", None),
    ("Alphen-Chaam", None),
    ("Altena", None),
    ("Ameland", None),
    ("Amersfoort", None),
    ("Amstelveen", None),
    ("Amsterdam", None),
    ("Apeldoorn", None),
    ("Arnhem", None),
    ("Assen", None),
    ("Asten", None),
    ("Baarle-Nassau", None),
    ("Baarn", None),
    ("Barendrecht", None),
    ("Barneveld", None),
    ("Beek", None),
    ("Beekdaelen", None),
    ("Beesel", None),
    ("Berg en Dal", None),
    ("Bergeijk", None),
    ("Bergen (L)", Some("Bergen (Limburg)")),
    ("Bergen (NH)", Some("Bergen (Noord-Holland)")),
    ("Bergen op Zoom", None),
    ("Berkelland", None),
    ("Bernheze", None),
    ("Best", None),
    ("Beuningen", None),
    ("Beverwijk", None),
    ("Bladel", None),
    ("Blaricum", None),
    ("Bloemendaal", None),
    ("Bodegraven-Reeuwijk", None),
    ("Boekel", None),
    ("Borger-Odoorn", None),
    ("Borne", None),
    ("Borsele", None),
    ("Boxtel", None),
    ("Breda", None),
    ("Bronckhorst", None),
    ("Brummen", None),
    ("Brunssum", None),
    ("Bunnik", None),
    ("Bunschoten", None),
    ("Buren", None),
    ("Capelle aan den IJssel", None),
    ("Castricum", None),
    ("Coevorden", None),
    ("Cranendonck", None),
    ("Culemborg", None),
    ("Dalfsen", None),
    ("Dantumadiel", None),
    ("De Bilt", None),
    ("De Fryske Marren", None),
    ("De Ronde Venen", None),
    ("De Wolden", None),
    ("Delft", None),
    ("Den Helder", None),
    ("Deurne", None),
    ("Deventer", None),
    ("Diemen", None),
    ("Dijk en Waard", None),
    ("Dinkelland", None),
    ("Doesburg", None),
    ("Doetinchem", None),
    ("Dongen", None),
    ("Dordrecht", None),
    ("Drechterland", None),
    ("Drimmelen", None),
    ("Dronten", None),
    ("Druten", None),
    ("Duiven", None),
    ("Echt-Susteren", None),
    ("Edam-Volendam", None),
    ("Ede", None),
    ("Eemnes", None),
    ("Eemsdelta", None),
    ("Eersel", None),
    ("Eijsden-Margraten", None),
    ("Eindhoven", None),
    ("Elburg", None),
    ("Emmen", None),
    ("Enkhuizen", None),
    ("Enschede", None),
    ("Epe", None),
    ("Ermelo", None),
    ("Etten-Leur", None),
    ("Geertruidenberg", None),
    ("Geldrop-Mierlo", None),
    ("Gemert-Bakel", None),
    ("Gennep", None),
    ("Gilze en Rijen", None),
    ("Goeree-Overflakkee", None),
    ("Goes", None),
    ("Goirle", None),
    ("Gooise Meren", None),
    ("Gorinchem", None),
    ("Gouda", None),
    ("Groningen", None),
    ("Gulpen-Wittem", None),
    ("Haaksbergen", None),
    ("Haarlem", None),
    ("Haarlemmermeer", None),
    ("Halderberge", None),
    ("Hardenberg", None),
    ("Harderwijk", None),
    ("Hardinxveld-Giessendam", None),
    ("Harlingen", None),
    ("Hattem", None),
    ("Heemskerk", None),
    ("Heemstede", None),
    ("Heerde", None),
    ("Heerenveen", None),
    ("Heerlen", None),
    ("Heeze-Leende", None),
    ("Heiloo", None),
    ("Hellendoorn", None),
    ("Helmond", None),
    ("Hendrik-Ido-Ambacht", None),
    ("Hengelo", None),
    ("Het Hogeland", None),
    ("Heumen", None),
    ("Heusden", None),
    ("Hillegom", None),
    ("Hilvarenbeek", None),
    ("Hilversum", None),
    ("Hoeksche Waard", None),
    ("Hof van Twente", None),
    ("Hollands Kroon", None),
    ("Hoogeveen", None),
    ("Hoorn", None),
    ("Horst aan de Maas", None),
    ("Houten", None),
    ("Huizen", None),
    ("Hulst", None),
    ("IJsselstein", None),
    ("Kaag en Braassem", None),
    ("Kampen", None),
    ("Kapelle", None),
    ("Katwijk", None),
    ("Kerkrade", None),
    ("Koggenland", None),
    ("Krimpen aan den IJssel", None),
    ("Krimpenerwaard", None),
    ("Laarbeek", None),
    ("Land van Cuijk", None),
    ("Landgraaf", None),
    ("Landsmeer", None),
    ("Lansingerland", None),
    ("Laren", None),
    ("Leeuwarden", None),
    ("Leiden", None),
    ("Leiderdorp", None),
    ("Leidschendam-Voorburg", None),
    ("Lelystad", None),
    ("Leudal", None),
    ("Leusden", None),
    ("Lingewaard", None),
    ("Lisse", None),
    ("Lochem", None),
    ("Loon op Zand", None),
    ("Lopik", None),
    ("Losser", None),
    ("Maasdriel", None),
    ("Maasgouw", None),
    ("Maashorst", None),
    ("Maassluis", None),
    ("Maastricht", None),
    ("Medemblik", None),
    ("Meerssen", None),
    ("Meierijstad", None),
    ("Meppel", None),
    ("Middelburg", None),
    ("Midden-Delfland", None),
    ("Midden-Drenthe", None),
    ("Midden-Groningen", None),
    ("Moerdijk", None),
    ("Molenlanden", None),
    ("Montferland", None),
    ("Montfoort", None),
    ("Mook en Middelaar", None),
    ("Neder-Betuwe", None),
    ("Nederweert", None),
    ("Nieuwegein", None),
    ("Nieuwkoop", None),
    ("Nijkerk", None),
    ("Nijmegen", None),
    ("Nissewaard", None),
    ("Noardeast-Fryslân", None),
    ("Noord-Beveland", None),
    ("Noordenveld", None),
    ("Noordoostpolder", None),
    ("Noordwijk", None),
    ("Nuenen, Gerwen en Nederwetten", Some("Nuenen")),
    ("Nunspeet", None),
    ("Oegstgeest", None),
    ("Oirschot", None),
    ("Oisterwijk", None),
    ("Oldambt", None),
    ("Oldebroek", None),
    ("Oldenzaal", None),
    ("Olst-Wijhe", None),
    ("Ommen", None),
    ("Oost Gelre", None),
    ("Oosterhout", None),
    ("Ooststellingwerf", None),
    ("Oostzaan", None),
    ("Opmeer", None),
    ("Opsterland", None),
    ("Oss", None),
    ("Oude IJsselstreek", None),
    ("Ouder-Amstel", None),
    ("Oudewater", None),
    ("Overbetuwe", None),
    ("Papendrecht", None),
    ("Peel en Maas", None),
    ("Pekela", None),
    ("Pijnacker-Nootdorp", None),
    ("Purmerend", None),
    ("Putten", None),
    ("Raalte", None),
    ("Reimerswaal", None),
    ("Renkum", None),
    ("Renswoude", None),
    ("Reusel-De Mierden", None),
    ("Rheden", None),
    ("Rhenen", None),
    ("Ridderkerk", None),
    ("Rijssen-Holten", None),
    ("Rijswijk", None),
    ("Roerdalen", None),
    ("Roermond", None),
    ("Roosendaal", None),
    ("Rotterdam", None),
    ("Rozendaal", None),
    ("Rucphen", None),
    ("Schagen", None),
    ("Scherpenzeel", None),
    ("Schiedam", None),
    ("Schiermonnikoog", None),
    ("Schouwen-Duiveland", None),
    ("Simpelveld", None),
    ("Sint-Michielsgestel", None),
    ("Sittard-Geleen", None),
    ("Sliedrecht", None),
    ("Sluis", None),
    ("Smallingerland", None),
    ("Soest", None),
    ("Someren", None),
    ("Son en Breugel", None),
    ("Stadskanaal", None),
    ("Staphorst", None),
    ("Stede Broec", None),
    ("Steenbergen", None),
    ("Steenwijkerland", None),
    ("Stein", None),
    ("Stichtse Vecht", None),
    ("Súdwest-Fryslân", None),
    ("Terneuzen", None),
    ("Terschelling", None),
    ("Texel", None),
    ("Teylingen", None),
    ("Tholen", None),
    ("Tiel", None),
    ("Tytsjerksteradiel", None),
    ("Tilburg", None),
    ("Tubbergen", None),
    ("Twenterand", None),
    ("Tynaarlo", None),
    ("Uitgeest", None),
    ("Uithoorn", None),
    ("Urk", None),
    ("Utrecht", None),
    ("Utrechtse Heuvelrug", None),
    ("Vaals", None),
    ("Valkenburg aan de Geul", None),
    ("Valkenswaard", None),
    ("Veendam", None),
    ("Veenendaal", None),
    ("Veere", None),
    ("Veldhoven", None),
    ("Velsen", None),
    ("Venlo", None),
    ("Venray", None),
    ("Vijfheerenlanden", None),
    ("Vlaardingen", None),
    ("Vlieland", None),
    ("Vlissingen", None),
    ("Voerendaal", None),
    ("Voorne aan Zee", None),
    ("Voorschoten", None),
    ("Voorst", None),
    ("Vught", None),
    ("Waadhoeke", None),
    ("Waalre", None),
    ("Waalwijk", None),
    ("Waddinxveen", None),
    ("Wageningen", None),
    ("Wassenaar", None),
    ("Waterland", None),
    ("Weert", None),
    ("West Betuwe", None),
    ("West Maas en Waal", None),
    ("Westerkwartier", None),
    ("Westerveld", None),
    ("Westervoort", None),
    ("Westerwolde", None),
    ("Westland", None),
    ("Weststellingwerf", None),
    ("Wierden", None),
    ("Wijchen", None),
    ("Wijdemeren", None),
    ("Wijk bij Duurstede", None),
    ("Winterswijk", None),
    ("Woensdrecht", None),
    ("Woerden", None),
    ("Wormerland", None),
    ("Woudenberg", None),
    ("Zaanstad", None),
    ("Zaltbommel", None),
    ("Zandvoort", None),
    ("Zeewolde", None),
    ("Zeist", None),
    ("Zevenaar", None),
    ("Zoetermeer", None),
    ("Zoeterwoude", None),
    ("Zuidplas", None),
    ("Zundert", None),
    ("Zutphen", None),
    ("Zwartewaterland", None),
    ("Zwijndrecht", None),
    ("Zwolle", None),
];

/// The provinces as the CVDR names them, with the everyday name where it differs.
const PROVINCES: &[(&str, Option<&str>)] = &[
    ("Drenthe", None),
    ("Flevoland", None),
    ("Fryslân", Some("Friesland")),
    ("Gelderland", None),
    ("Groningen", None),
    ("Limburg", None),
    ("Noord-Brabant", None),
    ("Noord-Holland", None),
    ("Overijssel", None),
    ("Utrecht", None),
    ("Zeeland", None),
    ("Zuid-Holland", None),
];

/// The water boards, by their full names (the CVDR writes a water board's name with its
/// kind).
const WATER_BOARDS: &[&str] = &[
    "Hoogheemraadschap De Stichtse Rijnlanden",
    "Hoogheemraadschap Hollands Noorderkwartier",
    "Hoogheemraadschap van Delfland",
    "Hoogheemraadschap van Rijnland",
    "Hoogheemraadschap van Schieland en de Krimpenerwaard",
    "Waterschap Aa en Maas",
    "Waterschap Amstel, Gooi en Vecht",
    "Waterschap Brabantse Delta",
    "Waterschap De Dommel",
    "Waterschap Drents Overijsselse Delta",
    "Waterschap Hollandse Delta",
    "Waterschap Hunze en Aa's",
    "Waterschap Limburg",
    "Waterschap Noorderzijlvest",
    "Waterschap Rijn en IJssel",
    "Waterschap Rivierenland",
    "Waterschap Scheldestromen",
    "Waterschap Vallei en Veluwe",
    "Waterschap Vechtstromen",
    "Waterschap Zuiderzeeland",
    "Wetterskip Fryslân",
];

/// The kinds a name may start with, as the keys spell them, and the platform's
/// `organisatieType`.
const KINDS: &[(&str, &str)] = &[
    ("gemeente", "Gemeente"),
    ("provincie", "Provincie"),
    ("waterschap", "Waterschap"),
    ("hoogheemraadschap", "Waterschap"),
    ("wetterskip", "Waterschap"),
];

/// `text` as a key: its words joined by `-`.
fn slug(text: &str) -> String {
    words(text).replace(' ', "-")
}

/// Every organisation the list knows, municipalities first.
pub static ORGANISATIONS: LazyLock<Vec<Org>> = LazyLock::new(|| {
    let mut out = Vec::new();
    for (kind, list) in [("Gemeente", MUNICIPALITIES), ("Provincie", PROVINCES)] {
        for &(creator, everyday) in list {
            let label = format!("{kind} {}", everyday.unwrap_or(creator));
            out.push(Org {
                key: slug(&label),
                label,
                platform: Organisation { kind, name: creator },
            });
        }
    }
    for &name in WATER_BOARDS {
        out.push(Org {
            key: slug(name),
            label: name.to_owned(),
            platform: Organisation {
                kind: "Waterschap",
                name,
            },
        });
    }
    out
});

/// Whether `needle`'s words occur in `hay` as whole words, in order, together.
fn holds_words(hay: &str, needle: &str) -> bool {
    !needle.is_empty() && format!(" {hay} ").contains(&format!(" {needle} "))
}

/// The organisation's name without its kind, in [`words`].
fn bare(o: &Org) -> String {
    let w = words(&o.label);
    KINDS
        .iter()
        .find_map(|(word, _)| w.strip_prefix(word).map(|r| r.trim().to_owned()))
        .unwrap_or(w)
}

/// Reads `asked` against [`ORGANISATIONS`]. See the module documentation.
pub fn resolve(asked: &str) -> Resolved {
    resolve_in(&ORGANISATIONS, asked)
}

fn resolve_in(orgs: &[Org], asked: &str) -> Resolved {
    let asked = asked.trim();
    if let Some(o) = orgs.iter().find(|o| o.key.eq_ignore_ascii_case(asked)) {
        return Resolved::One(o.clone());
    }
    let wanted = words(asked);
    let exact: Vec<Org> = orgs
        .iter()
        .filter(|o| {
            words(&o.label) == wanted
                || words(&o.key) == wanted
                || words(o.platform.name) == wanted
                || bare(o) == wanted
        })
        .cloned()
        .collect();
    match exact.len() {
        1 => return Resolved::One(exact[0].clone()),
        0 => {}
        _ => return Resolved::Ambiguous(exact.into_iter().take(MAX_CANDIDATES).collect()),
    }
    // "gemeente Utrecht": the kind narrows, the rest is the place.
    let (kind, place) = KINDS
        .iter()
        .find_map(|(word, kind)| {
            wanted
                .strip_prefix(word)
                .filter(|rest| rest.is_empty() || rest.starts_with(' '))
                .map(|rest| (Some(*kind), rest.trim().to_owned()))
        })
        .unwrap_or((None, wanted.clone()));
    let of_kind = |o: &&Org| kind.is_none_or(|k| o.platform.kind == k);
    let fits: Vec<Org> = orgs
        .iter()
        .filter(of_kind)
        .filter(|o| holds_words(&words(&o.label), &place) || holds_words(&words(o.platform.name), &place))
        .cloned()
        .collect();
    match fits.len() {
        1 => Resolved::One(fits[0].clone()),
        0 => {
            let mut scored: Vec<(f64, &Org)> = orgs
                .iter()
                .filter(of_kind)
                .map(|o| (strsim::jaro_winkler(&bare(o), &place), o))
                .collect();
            scored.sort_by(|a, b| b.0.total_cmp(&a.0).then_with(|| a.1.key.cmp(&b.1.key)));
            Resolved::Unknown(scored.into_iter().take(5).map(|(_, o)| o.clone()).collect())
        }
        _ => {
            let mut fits = fits;
            // The shortest names first: `Gemeente Utrecht` before `Gemeente Utrechtse Heuvelrug`.
            fits.sort_by_key(|o| (o.label.len(), o.key.clone()));
            fits.truncate(MAX_CANDIDATES);
            Resolved::Ambiguous(fits)
        }
    }
}

/// What an asked `organization` names, for asking back: the organisations it fits,
/// each by its key and its name.
pub fn asked(asked: &str) -> Resolution {
    match resolve(asked) {
        Resolved::One(_) => Resolution::Exact,
        Resolved::Unknown(_) => Resolution::Unknown,
        Resolved::Ambiguous(fits) => of_candidates(
            fits.into_iter()
                .map(|o| Choice {
                    value: o.key,
                    label: o.label,
                })
                .collect(),
        ),
    }
}

/// The tool error for an `organization` that is not one organisation: which it could be,
/// and that nothing was asked.
pub fn refusal(tool: &str, asked: &str, resolved: &Resolved) -> Option<String> {
    let list = |orgs: &[Org]| {
        orgs.iter()
            .map(|o| format!("`{}` ({})", o.key, o.label))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let asked = crate::platforms::http::brief(asked);
    match resolved {
        Resolved::One(_) => None,
        Resolved::Ambiguous(fits) => Some(format!(
            "{tool}: `organization` `{asked}` fits {} organisations: {}. Give one key as `organization` \
             (nothing was asked of the CVDR).",
            fits.len(),
            list(fits)
        )),
        Resolved::Unknown(near) => Some(format!(
            "{tool}: no municipality, province or water board is called `{asked}`; the nearest: {}. Give a key \
             or a name as `organization` (nothing was asked of the CVDR).",
            list(near)
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(asked: &str) -> String {
        match resolve(asked) {
            Resolved::One(o) => o.key,
            other => panic!("{asked}: {other:?}"),
        }
    }

    #[test]
    fn the_list_has_every_municipality_province_and_water_board_once() {
        let count = |kind: &str| ORGANISATIONS.iter().filter(|o| o.platform.kind == kind).count();
        assert_eq!(
            (count("Gemeente"), count("Provincie"), count("Waterschap")),
            (342, 12, 21)
        );
        let mut keys: Vec<&str> = ORGANISATIONS.iter().map(|o| o.key.as_str()).collect();
        keys.sort_unstable();
        keys.dedup();
        assert_eq!(keys.len(), ORGANISATIONS.len(), "keys are unique");
        assert!(
            ORGANISATIONS
                .iter()
                .all(|o| !o.platform.name.contains('"') && !o.platform.name.contains('\\')),
            "every name can be quoted in CQL"
        );
    }

    #[test]
    fn names_resolve_to_the_platforms_creator_and_kind() {
        assert_eq!(key("gemeente-utrecht"), "gemeente-utrecht");
        assert_eq!(key("Gemeente Utrecht"), "gemeente-utrecht");
        assert_eq!(key("provincie utrecht"), "provincie-utrecht");
        assert_eq!(key("Amersfoort"), "gemeente-amersfoort");
        assert_eq!(key("Den Haag"), "gemeente-den-haag");
        assert_eq!(key("'s-Gravenhage"), "gemeente-den-haag");
        assert_eq!(key("Rivierenland"), "waterschap-rivierenland");
        assert_eq!(key("Friesland"), "provincie-friesland");
        let Resolved::One(haag) = resolve("gemeente den haag") else {
            panic!("Den Haag")
        };
        assert_eq!(
            haag.platform,
            Organisation {
                kind: "Gemeente",
                name: "'s-Gravenhage"
            }
        );
    }

    #[test]
    fn an_ambiguous_or_unknown_name_lists_candidates() {
        let Resolved::Ambiguous(fits) = resolve("Utrecht") else {
            panic!("Utrecht is a municipality and a province")
        };
        let keys: Vec<&str> = fits.iter().map(|o| o.key.as_str()).collect();
        assert_eq!(keys, ["gemeente-utrecht", "provincie-utrecht"]);
        let message = refusal("cvdr_search", "Utrecht", &resolve("Utrecht")).unwrap();
        assert!(message.contains("fits 2 organisations"), "{message}");
        assert!(matches!(resolve("Bergen"), Resolved::Ambiguous(f) if f.len() >= 2));
        let Resolved::Unknown(near) = resolve("Amersfort") else {
            panic!("a typo is not a name")
        };
        assert_eq!(near[0].key, "gemeente-amersfoort");
        assert!(
            refusal("cvdr_search", "Amersfort", &resolve("Amersfort"))
                .unwrap()
                .contains("nothing was asked of the CVDR")
        );
    }
}
