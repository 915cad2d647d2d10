//! The ids and links the Tweede Kamer reads (`fetch`, and `tk_document`,
//! `tk_document_text`, `tk_debate`'s `id`): a document's GUID or its number
//! (`2021D02426`, what tk_search and the Kamer's pages list first), a case number
//! (`2021Z00984`: read as its votes), a meeting (`vergadering:<GUID>`, what tk_debates
//! gives) or a report (`verslag:<GUID>`), an activity number (`2025A04597`: the debate's
//! report; OpenTK keeps a copy, read with `opentk:`), and the links people have — a
//! document or motion page on tweedekamer.nl (`…/detail?id=2021Z00984&did=2021D02426`),
//! an activity's page (`…/details?id=2025A04496`), a plenary report's page
//! (`…/plenaire_verslagen/detail/2024-2025/105`), a download link
//! (`/downloads/document?id=<GUID>`) and a record of the open-data portal
//! (`…/Document(<GUID>)`, `…/Vergadering(<GUID>)`, `…/Verslag(<GUID>)`).
//!
//! A bare GUID is read as a document by `fetch` (documents are what the Kamer's GUIDs
//! name most); `tk_debate` reads it as a meeting, else a report.

use crate::connectors::ids::{link_to, query_value, segments};
use crate::platforms::tk::{is_activity_number, is_case_number, is_document_number, is_guid};

/// The page of a document on tweedekamer.nl, by its number (`2024D20431`): the
/// `kamerstukken/detail` form the Kamer's site and those who cite it use, with the
/// number as both `id` and `did` (real links: `…/kamerstukken/detail?id=2024D20431&did=
/// 2024D20431`, `…?id=2016D13371&did=2016D13371`). `None` for what is no document number.
pub fn document_page(number: &str) -> Option<String> {
    let number = number.trim().to_ascii_uppercase();
    is_document_number(&number)
        .then(|| format!("https://www.tweedekamer.nl/kamerstukken/detail?id={number}&did={number}"))
}

/// The page of a case on tweedekamer.nl, by its number (`2026Z19970`: `…/kamerstukken/
/// detail?id=2026Z19970`). `None` for what is no case number.
pub fn case_page(number: &str) -> Option<String> {
    let number = number.trim().to_ascii_uppercase();
    is_case_number(&number).then(|| format!("https://www.tweedekamer.nl/kamerstukken/detail?id={number}"))
}

/// A document as the Kamer's readers take it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum DocumentRef {
    /// Its `Id`, lower case.
    Guid(String),
    /// Its number, upper case.
    Number(String),
}

impl DocumentRef {
    /// The id as shown.
    pub fn as_str(&self) -> &str {
        match self {
            DocumentRef::Guid(s) | DocumentRef::Number(s) => s,
        }
    }
}

/// What `id` names: a document, a case (its number), a meeting, a report, an activity or
/// a plenary meeting by year and number.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Named {
    /// A document.
    Document(DocumentRef),
    /// A case, by its number.
    Case(String),
    /// A meeting (`Vergadering`), by its GUID (lower case).
    Meeting(String),
    /// A report (`Verslag`), by its GUID (lower case).
    Report(String),
    /// An activity, by its number (`2025A04597`).
    Activity(String),
    /// A plenary meeting by its parliamentary year and number (its report's page).
    Plenary {
        /// `2024-2025`.
        year: String,
        /// The meeting's number in the year.
        number: u32,
    },
}

/// The id `tk_debates` gives a meeting: `vergadering:<GUID>`.
pub fn meeting_id(guid: &str) -> String {
    format!("vergadering:{}", guid.to_ascii_lowercase())
}

/// What `id` (an id or a link) names, if it is one of the Kamer's.
pub fn named(id: &str) -> Option<Named> {
    let id = id.trim();
    if let Some(url) = link_to(id, "tweedekamer.nl").or_else(|| link_to(id, "gegevensmagazijn.tweedekamer.nl")) {
        if let Some(did) = query_value(&url, "did") {
            return document(&did).map(Named::Document);
        }
        let parts = segments(&url);
        for part in &parts {
            let record = |prefix: &str| {
                part.strip_prefix(prefix)
                    .map(|g| g.trim_end_matches(')').to_ascii_lowercase())
                    .filter(|g| is_guid(g))
            };
            if let Some(g) = part.strip_prefix("Document(") {
                return document(g.trim_end_matches(')')).map(Named::Document);
            }
            if let Some(g) = record("Vergadering(") {
                return Some(Named::Meeting(g));
            }
            if let Some(g) = record("Verslag(") {
                return Some(Named::Report(g));
            }
        }
        // A plenary report's page: `kamerstukken/plenaire_verslagen/detail/2024-2025/105`.
        if let Some(at) = parts.iter().position(|p| p == "plenaire_verslagen")
            && let [_, year, number] = parts.get(at + 1..at + 4).unwrap_or_default()
            && year.len() == 9
            && let Ok(number) = number.parse::<u32>()
        {
            return Some(Named::Plenary {
                year: year.clone(),
                number,
            });
        }
        return query_value(&url, "id").and_then(|v| named_bare(&v));
    }
    named_bare(id)
}

fn named_bare(id: &str) -> Option<Named> {
    let upper = id.to_ascii_uppercase();
    if is_case_number(&upper) {
        return Some(Named::Case(upper));
    }
    if is_activity_number(&upper) {
        return Some(Named::Activity(upper));
    }
    let lower = id.to_ascii_lowercase();
    for (prefix, make) in [
        ("vergadering:", Named::Meeting as fn(String) -> Named),
        ("verslag:", Named::Report),
    ] {
        if let Some(g) = lower.strip_prefix(prefix).map(str::trim).filter(|g| is_guid(g)) {
            return Some(make(g.to_owned()));
        }
    }
    document(id).map(Named::Document)
}

/// `id` as a document: a GUID or a number.
pub fn document(id: &str) -> Option<DocumentRef> {
    let (lower, upper) = (id.trim().to_ascii_lowercase(), id.trim().to_ascii_uppercase());
    if is_guid(&lower) {
        Some(DocumentRef::Guid(lower))
    } else if is_document_number(&upper) {
        Some(DocumentRef::Number(upper))
    } else {
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_guids_and_links_of_the_kamer_are_read() {
        // Real: the Algoritmeregister motion (Kamerstuk 35510-16), document 2021D02426
        // of case 2021Z00984, as tweedekamer.nl links it.
        let number = Some(Named::Document(DocumentRef::Number("2021D02426".into())));
        assert_eq!(named("2021D02426"), number);
        assert_eq!(named("2021d02426"), number);
        assert_eq!(
            named("https://www.tweedekamer.nl/kamerstukken/moties/detail?id=2021Z00984&did=2021D02426"),
            number
        );
        assert_eq!(
            named("https://www.tweedekamer.nl/kamerstukken/brieven_regering/detail?id=2021Z00984&did=2021D02426"),
            number
        );
        assert_eq!(named("2021Z00984"), Some(Named::Case("2021Z00984".into())));
        let guid = "72f7ab9b-dc59-4e67-8a04-798a744c256e";
        let by_guid = Some(Named::Document(DocumentRef::Guid(guid.into())));
        assert_eq!(named(&guid.to_uppercase()), by_guid);
        assert_eq!(
            named(&format!(
                "https://gegevensmagazijn.tweedekamer.nl/OData/v4/2.0/Document({guid})"
            )),
            by_guid
        );
        assert_eq!(
            named(&format!("https://www.tweedekamer.nl/downloads/document?id={guid}")),
            by_guid
        );
        assert_eq!(named("kst-35510-16"), None);
        // Meetings, reports and activities (tk_debate).
        let meeting = "29d8cf68-423e-4ae9-b4f0-7e908c7f5311";
        assert_eq!(named(&meeting_id(meeting)), Some(Named::Meeting(meeting.into())));
        assert_eq!(
            named(&format!("VERGADERING:{}", meeting.to_uppercase())),
            Some(Named::Meeting(meeting.into()))
        );
        assert_eq!(
            named(&format!(
                "https://gegevensmagazijn.tweedekamer.nl/OData/v4/2.0/Verslag({meeting})/resource"
            )),
            Some(Named::Report(meeting.into()))
        );
        assert_eq!(
            named(&format!(
                "gegevensmagazijn.tweedekamer.nl/OData/v4/2.0/Vergadering({meeting})"
            )),
            Some(Named::Meeting(meeting.into()))
        );
        assert_eq!(named("2025a04597"), Some(Named::Activity("2025A04597".into())));
        assert_eq!(
            named("https://www.tweedekamer.nl/debat_en_vergadering/commissievergaderingen/details?id=2025A04496"),
            Some(Named::Activity("2025A04496".into()))
        );
        let plenary = Some(Named::Plenary {
            year: "2024-2025".into(),
            number: 105,
        });
        assert_eq!(
            named("https://www.tweedekamer.nl/kamerstukken/plenaire_verslagen/detail/2024-2025/105"),
            plenary
        );
        assert_eq!(
            named(&crate::platforms::tk::TkClient::plenary_page("2024-2025", 105)),
            plenary
        );
        assert_eq!(named("vergadering:nope"), None);
        // The pages a result links to read back as what they link.
        assert_eq!(named(&document_page("2021d02426").expect("a page")), number);
        assert_eq!(
            named(&case_page("2021Z00984").expect("a page")),
            Some(Named::Case("2021Z00984".into()))
        );
        assert_eq!(document_page("2021Z00984"), None);
        assert_eq!(case_page("2021D02426"), None);
    }
}
