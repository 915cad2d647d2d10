//! The ids and links OpenTK reads (`fetch`): a Tweede Kamer document number or kamerstuk
//! id (OpenTK keeps a copy: the Tweede Kamer and Officiële Bekendmakingen issue them, so
//! `fetch` reads them there unless `opentk:` is asked), an activity number
//! (`2025A04597`: a meeting or debate, its agenda, documents and video; the Kamer issues
//! the number and reads the debate's words, so `fetch` reads it there unless `opentk:`
//! is asked or the link is OpenTK's), and links to OpenTK's pages: what such an id names
//! and OpenTK's claim on it. The reader that runs a tool on it is beside the connector
//! (`mod.rs`).

use crate::connectors::ids::{Claim, link_to, query_value};
use crate::platforms::opentk::{DocumentId, parse_number};

/// What an id OpenTK reads names.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Named {
    /// An activity (a meeting or debate), by its number.
    Activity(String),
    /// A document, by its number, kamerstuk id or GUID.
    Document(String),
}

/// What `id` names, and OpenTK's claim on it; `None` for an id OpenTK does not read.
pub(super) fn parse(id: &str) -> Option<(Named, Claim)> {
    let (bare, claim) = match link_to(id, "berthub.eu") {
        Some(url) => (query_value(&url, "nummer")?, Claim::Home),
        None => (id.trim().to_owned(), Claim::Copy),
    };
    if let Some(number) = parse_number(&bare).filter(|n| n.as_bytes().get(4) == Some(&b'A')) {
        // The Kamer issues activity numbers and reads the debate's words (tk_debate);
        // OpenTK's agenda and video are read by a link to OpenTK or with `opentk:`.
        return Some((Named::Activity(number), claim));
    }
    let document = DocumentId::parse(&bare)?;
    // A GUID is the Kamer's alone: OpenTK is asked for it only by `opentk:`.
    let guid = crate::platforms::http::is_guid(document.as_str());
    let claim = if guid { Claim::Copy } else { claim };
    Some((Named::Document(document.as_str().to_owned()), claim))
}
