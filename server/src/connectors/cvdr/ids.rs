//! The ids and links the CVDR reads (`fetch`, and `cvdr_read`'s `id`): a CVDR id with or
//! without its version (`CVDR112779_1`, `CVDR112779`, the old export's `112779_1` only
//! with the prefix), and with `#` and an article if wanted (`CVDR100394_2#3`, as
//! `cvdr_read`'s `article`), and links to lokaleregelgeving.overheid.nl (`/CVDR112779/1`)
//! ([`asked`]).
//!
//! What this module does not do: read the regulation (the family's reading does, with
//! what [`asked`] found).

use crate::connectors::ids::{link_to, segments};
use crate::connectors::regulation::Asked;
use crate::platforms::cvdr::is_cvdr_id;

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

/// What `id` asks: the CVDR id, and one article's number after `#` (`CVDR100394_2#3`).
pub fn asked(id: &str) -> Option<Asked> {
    let (id, article) = match id.trim().split_once('#') {
        Some((id, article)) if !id.contains("://") && !id.contains('/') => {
            (id, Some(article.trim().to_owned()).filter(|a| !a.is_empty()))
        }
        _ => (id, None),
    };
    Some(Asked {
        id: cvdr_id(id)?,
        date: None,
        article,
    })
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
        // Real: CVDR100394 version 2 (corpus/cvdr/CVDR100394_2.xml), its article 3.
        let a = |id: &str, article: Option<&str>| {
            Some(Asked {
                id: id.into(),
                date: None,
                article: article.map(Into::into),
            })
        };
        assert_eq!(asked("CVDR100394_2#3"), a("CVDR100394_2", Some("3")));
        assert_eq!(asked("cvdr100394_2"), a("CVDR100394_2", None));
        assert_eq!(asked("CVDR100394_2#"), a("CVDR100394_2", None));
        assert_eq!(
            asked("https://lokaleregelgeving.overheid.nl/CVDR100394/2#x"),
            a("CVDR100394_2", None)
        );
        assert_eq!(cvdr_id("https://wetten.overheid.nl/BWBR0018451"), None);
    }
}
