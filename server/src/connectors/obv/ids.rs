//! The ids OpenBesluitvorming reads (`fetch`, and `obv_document`'s `id`): its composite
//! entity ids, `type:supplier:orgtype:org:sourceid`
//! (`document:notubiz:gemeente:soest:12345`), of a document, meeting, motion or
//! recording.

use super::{DOCUMENT_TOOL, DocumentArgs, obv_document};
use crate::connectors::ids::{Claim, IdForm, IdReader, Paging, Reading};

/// What OpenBesluitvorming reads.
pub const READER: IdReader = IdReader {
    forms: &[IdForm {
        what: "an OpenBesluitvorming id (document, meeting, motion)",
        example: "document:notubiz:gemeente:soest:12345",
    }],
    read,
};

/// The entity types whose ids `obv_document` reads.
const TYPES: [&str; 4] = ["document", "meeting", "motion", "recording"];

/// True for an entity id: a known type, then at least three more non-empty parts.
pub fn is_entity_id(id: &str) -> bool {
    let parts: Vec<&str> = id.split(':').collect();
    parts.len() >= 4
        && TYPES.contains(&parts[0])
        && parts[1..]
            .iter()
            .all(|p| !p.is_empty() && !p.contains(char::is_whitespace))
        && id.len() <= 300
}

fn read(id: &str, paging: Paging) -> Option<Result<Reading, String>> {
    let id = id.trim();
    if !is_entity_id(id) {
        return None;
    }
    let args = DocumentArgs {
        id: id.to_owned(),
        offset: paging.offset,
        length: paging.length,
    };
    Some(Ok(Reading::new(id, Claim::Home, &DOCUMENT_TOOL, move |ctx, call| {
        Box::pin(obv_document(ctx, call, args))
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entity_ids_are_read_and_nothing_else() {
        // The form of OpenBesluitvorming's API documentation (API.md).
        assert!(is_entity_id("document:notubiz:gemeente:soest:12345"));
        assert!(is_entity_id("meeting:ibabs:gemeente:utrecht:abc-1"));
        assert!(!is_entity_id("ECLI:NL:RVS:2015:3394"));
        assert!(!is_entity_id("document:notubiz"));
        assert!(!is_entity_id("kst-36200-VII-5"));
    }
}
