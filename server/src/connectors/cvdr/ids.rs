//! The ids and links the CVDR reads (`fetch`, and `cvdr_read`'s `id`): a CVDR id with or
//! without its version (`CVDR112779_1`, `CVDR112779`, the old export's `112779_1` only
//! with the prefix), and links to lokaleregelgeving.overheid.nl (`/CVDR112779/1`).

use super::{READ_TOOL, ReadArgs, cvdr_read};
use crate::connectors::ids::{Claim, IdForm, IdReader, Paging, Reading, link_to, segments};
use crate::platforms::cvdr::is_cvdr_id;

/// What the CVDR reads.
pub const READER: IdReader = IdReader {
    forms: &[
        IdForm {
            what: "a CVDR id, with or without its version",
            example: "CVDR112779_1",
        },
        IdForm {
            what: "a link to lokaleregelgeving.overheid.nl",
            example: "lokaleregelgeving.overheid.nl/CVDR112779/1",
        },
    ],
    read,
};

/// The CVDR id in `id` (`CVDR112779_1`, `CVDR112779`), or in a link to its page.
pub fn cvdr_id(id: &str) -> Option<String> {
    if let Some(url) = link_to(id, "lokaleregelgeving.overheid.nl") {
        let segments = segments(&url);
        let work = segments.first()?.to_ascii_uppercase();
        let id = match segments.get(1).filter(|v| v.bytes().all(|b| b.is_ascii_digit())) {
            Some(version) => format!("{work}_{version}"),
            None => work,
        };
        return is_cvdr_id(&id).then_some(id);
    }
    let id = id.trim().to_ascii_uppercase();
    is_cvdr_id(&id).then_some(id)
}

fn read(id: &str, paging: Paging) -> Option<Result<Reading, String>> {
    let id = cvdr_id(id)?;
    let args = ReadArgs {
        id: id.clone(),
        date: None,
        article: None,
        offset: paging.offset,
        length: paging.length,
    };
    Some(Ok(Reading::new(id, Claim::Home, &READ_TOOL, move |ctx, call| {
        Box::pin(cvdr_read(ctx, call, args))
    })))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cvdr_ids_and_links_to_lokaleregelgeving_read_as_the_id() {
        // Real: CVDR112779, version 1 (PLATFORMS.md §11, from a real export).
        assert_eq!(cvdr_id("CVDR112779_1").as_deref(), Some("CVDR112779_1"));
        assert_eq!(cvdr_id("cvdr112779").as_deref(), Some("CVDR112779"));
        assert_eq!(
            cvdr_id("https://lokaleregelgeving.overheid.nl/CVDR112779/1").as_deref(),
            Some("CVDR112779_1")
        );
        assert_eq!(
            cvdr_id("https://lokaleregelgeving.overheid.nl/CVDR112779").as_deref(),
            Some("CVDR112779")
        );
        assert_eq!(cvdr_id("112779_1"), None, "a bare number is no one's");
        assert_eq!(cvdr_id("https://wetten.overheid.nl/BWBR0018451"), None);
    }
}
