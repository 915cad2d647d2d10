//! The ids and links Rechtspraak reads (`fetch`, and `rechtspraak_ruling`'s `id`): an
//! ECLI, and the links to a ruling on uitspraken.rechtspraak.nl and data.rechtspraak.nl.

use super::{RULING_TOOL, RulingArgs, rechtspraak_ruling};
use crate::connectors::ids::{Claim, IdForm, IdReader, Paging, Reading, link_to, query_value};
use crate::platforms::rechtspraak::Ecli;

/// What Rechtspraak reads.
pub const READER: IdReader = IdReader {
    paged: &[&RULING_TOOL],
    forms: &[
        IdForm {
            what: "an ECLI",
            example: "ECLI:NL:RVS:2015:3394",
        },
        IdForm {
            what: "a link to a ruling on uitspraken.rechtspraak.nl",
            example: "uitspraken.rechtspraak.nl/details?id=ECLI:NL:HR:2019:2006",
        },
    ],
    read,
};

/// The ECLI in `id`: itself, or the `id` of a link to the ruling.
pub fn ecli_of(id: &str) -> Option<Ecli> {
    if let Some(ecli) = Ecli::parse(id) {
        return Some(ecli);
    }
    let url = link_to(id, "uitspraken.rechtspraak.nl").or_else(|| link_to(id, "data.rechtspraak.nl"))?;
    query_value(&url, "id").and_then(|v| Ecli::parse(&v))
}

fn read(id: &str, paging: Paging) -> Option<Result<Reading, String>> {
    let ecli = ecli_of(id)?;
    let args = RulingArgs {
        id: Some(ecli.as_str().to_owned()),
        ecli: None,
        offset: paging.offset,
        length: paging.length,
    };
    Some(Ok(Reading::new(
        ecli.as_str(),
        Claim::Home,
        &RULING_TOOL,
        move |ctx, call| Box::pin(rechtspraak_ruling(ctx, call, args)),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_ecli_and_links_to_a_ruling_read_as_its_ecli() {
        // Real rulings: the Raad van State's (an id assistants were seen to give) and the Hoge Raad's Urgenda ruling.
        for (given, ecli) in [
            ("ECLI:NL:RVS:2015:3394", "ECLI:NL:RVS:2015:3394"),
            ("ecli:nl:hr:2019:2006", "ECLI:NL:HR:2019:2006"),
            (
                "https://uitspraken.rechtspraak.nl/details?id=ECLI:NL:HR:2019:2006",
                "ECLI:NL:HR:2019:2006",
            ),
            (
                "https://uitspraken.rechtspraak.nl/inziendocument?id=ECLI:NL:HR:2019:2006",
                "ECLI:NL:HR:2019:2006",
            ),
            (
                "https://data.rechtspraak.nl/uitspraken/content?id=ECLI:NL:RVS:2015:3394",
                "ECLI:NL:RVS:2015:3394",
            ),
        ] {
            let reading = read(given, Paging::default()).expect("read").expect("fits");
            assert_eq!(
                (reading.id.as_str(), reading.tool.name),
                (ecli, "rechtspraak_ruling"),
                "{given}"
            );
        }
        assert!(read("https://uitspraken.rechtspraak.nl/", Paging::default()).is_none());
        assert!(read("BWBR0018451", Paging::default()).is_none());
    }
}
