//! The ids Open Raadsinformatie reads (`fetch`, where a mirror is configured): a search
//! result's `index/id` (`ori_heemskerk_20250506181303/1001`).

use super::{DOCUMENT_TOOL, DocumentArgs, ori_document};
use crate::connectors::ids::{Claim, IdForm, IdReader, Paging, Reading};

/// What ORI reads.
pub const READER: IdReader = IdReader {
    forms: &[IdForm {
        what: "an ORI document as `index/id` (a mirror only)",
        example: "ori_heemskerk_20250506181303/1001",
    }],
    read,
};

fn read(id: &str, paging: Paging) -> Option<Result<Reading, String>> {
    let id = id.trim();
    let (index, doc) = id.split_once('/')?;
    let index_ok = ["ori_", "osi_", "owi_"].iter().any(|p| index.starts_with(p))
        && index
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-'));
    if !index_ok || doc.is_empty() || !doc.bytes().all(|b| b.is_ascii_alphanumeric()) {
        return None;
    }
    let args = DocumentArgs {
        id: id.to_owned(),
        offset: paging.offset,
        length: paging.length,
    };
    Some(Ok(Reading::new(id, Claim::Home, &DOCUMENT_TOOL, move |ctx, call| {
        Box::pin(ori_document(ctx, call, args))
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_index_and_id_is_ori_and_a_link_is_not() {
        assert!(read("ori_heemskerk_20250506181303/1001", Paging::default()).is_some());
        assert!(read("https://wetten.overheid.nl/BWBR0018451", Paging::default()).is_none());
        assert!(read("kst-35510-16", Paging::default()).is_none());
    }
}
