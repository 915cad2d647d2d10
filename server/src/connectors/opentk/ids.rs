//! The ids and links OpenTK reads (`fetch`): a Tweede Kamer document number or kamerstuk
//! id (OpenTK keeps a copy: the Tweede Kamer and Officiële Bekendmakingen issue them, so
//! `fetch` reads them there unless `opentk:` is asked), an activity number
//! (`2025A04597`: a meeting or debate, its agenda, documents and video; the Kamer issues
//! the number and reads the debate's words, so `fetch` reads it there unless `opentk:`
//! is asked or the link is OpenTK's), and links to OpenTK's pages.

use super::{ACTIVITY_TOOL, ActivityArgs, DOCUMENT_TOOL, DocumentArgs, opentk_activity, opentk_document};
use crate::connectors::ids::{Claim, IdForm, IdReader, Paging, Reading, link_to, query_value};
use crate::platforms::opentk::{DocumentId, parse_number};

/// What OpenTK reads.
pub const READER: IdReader = IdReader {
    paged: &[&DOCUMENT_TOOL],
    forms: &[
        IdForm {
            what: "an activity (meeting, debate) number",
            example: "2025A04597",
        },
        IdForm {
            what: "a document number or kamerstuk id, as `opentk:…`",
            example: "opentk:2021D02426",
        },
        IdForm {
            what: "a link to an OpenTK page",
            example: "berthub.eu/tkconv/document.html?nummer=2021D02426",
        },
    ],
    read,
};

fn read(id: &str, paging: Paging) -> Option<Result<Reading, String>> {
    let (bare, claim) = match link_to(id, "berthub.eu") {
        Some(url) => (query_value(&url, "nummer")?, Claim::Home),
        None => (id.trim().to_owned(), Claim::Copy),
    };
    if let Some(number) = parse_number(&bare).filter(|n| n.as_bytes().get(4) == Some(&b'A')) {
        let args = ActivityArgs { id: number.clone() };
        // The Kamer issues activity numbers and reads the debate's words (tk_debate);
        // OpenTK's agenda and video are read by a link to OpenTK or with `opentk:`.
        return Some(Ok(Reading::new(number, claim, &ACTIVITY_TOOL, move |ctx, call| {
            Box::pin(opentk_activity(ctx, call, args))
        })));
    }
    let document = DocumentId::parse(&bare)?;
    // A GUID is the Kamer's alone: OpenTK is asked for it only by `opentk:`.
    let guid = crate::platforms::http::is_guid(document.as_str());
    let args = DocumentArgs {
        id: document.as_str().to_owned(),
        offset: paging.offset,
        length: paging.length,
        source: None,
    };
    let claim = if guid { Claim::Copy } else { claim };
    Some(Ok(Reading::new(
        document.as_str(),
        claim,
        &DOCUMENT_TOOL,
        move |ctx, call| Box::pin(opentk_document(ctx, call, args)),
    )))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn activities_and_documents_are_a_copy_unless_the_link_is_opentks() {
        let r = |id: &str| read(id, Paging::default()).map(|r| r.map(|r| (r.id, r.claim, r.tool.name)));
        assert_eq!(
            r("2025A04597"),
            Some(Ok(("2025A04597".into(), Claim::Copy, "opentk_activity")))
        );
        assert_eq!(
            r("2021D02426"),
            Some(Ok(("2021D02426".into(), Claim::Copy, "opentk_document")))
        );
        assert_eq!(
            r("kst-35510-16"),
            Some(Ok(("kst-35510-16".into(), Claim::Copy, "opentk_document")))
        );
        assert_eq!(
            r("https://berthub.eu/tkconv/document.html?nummer=2021D02426"),
            Some(Ok(("2021D02426".into(), Claim::Home, "opentk_document")))
        );
        assert!(r("ECLI:NL:RVS:2015:3394").is_none());
    }
}
