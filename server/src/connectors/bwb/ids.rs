//! The ids and links the Basiswettenbestand reads (`fetch`, and `bwb_read`'s `id`): a BWB
//! id, with a date (`@2025-06-01`) and an article (`#2`) if wanted, and links to
//! wetten.overheid.nl — `/BWBR0018451/2025-06-01`, with `#Artikel2` or `/0/Artikel2`,
//! and the `jci1.3:c:BWBR…&artikel=…` form ([`asked`]).
//!
//! What this module does not do: read the regulation (the family's reading does, with
//! what [`asked`] found).

use crate::connectors::ids::{link_to, segments};
use crate::connectors::regulation::Asked;
use crate::platforms::bwb::is_bwb_id;

/// What `id` asks: a BWB id with its parts, or a link to wetten.overheid.nl.
pub fn asked(id: &str) -> Option<Asked> {
    if let Some(url) = link_to(id, "wetten.overheid.nl") {
        return from_link(&url);
    }
    let (rest, article) = match id.split_once('#') {
        Some((r, a)) => (r, Some(a.trim().to_owned()).filter(|a| !a.is_empty())),
        None => (id, None),
    };
    let (law, date) = match rest.split_once('@') {
        Some((l, d)) => (l.trim(), Some(d.trim().to_owned())),
        None => (rest.trim(), None),
    };
    let law = law.to_ascii_uppercase();
    is_bwb_id(&law).then_some(Asked { id: law, date, article })
}

fn from_link(url: &reqwest::Url) -> Option<Asked> {
    let segments = segments(url);
    let first = segments.first()?;
    // `jci1.3:c:BWBR0005537&hoofdstuk=1&artikel=1:1`: the id and article in the segment.
    if let Some(jci) = first.strip_prefix("jci1.3:c:") {
        let mut parts = jci.split('&');
        let id = parts.next()?.to_ascii_uppercase();
        let article = parts.find_map(|p| p.strip_prefix("artikel=")).map(str::to_owned);
        let date = parts.find_map(|p| p.strip_prefix("g=")).map(str::to_owned);
        return is_bwb_id(&id).then_some(Asked { id, date, article });
    }
    let id = first.to_ascii_uppercase();
    if !is_bwb_id(&id) {
        return None;
    }
    let date = segments
        .get(1)
        .filter(|d| d.len() == 10 && d.as_bytes()[4] == b'-')
        .cloned();
    let label = url
        .fragment()
        .map(str::to_owned)
        .or_else(|| segments.iter().rev().find(|s| s.starts_with("Artikel")).cloned());
    let article = label
        .and_then(|l| l.rsplit('/').next().map(str::to_owned))
        .and_then(|l| l.strip_prefix("Artikel").map(|n| n.replace('_', ":")))
        .filter(|n| !n.is_empty());
    Some(Asked { id, date, article })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn a(id: &str, date: Option<&str>, article: Option<&str>) -> Option<Asked> {
        Some(Asked {
            id: id.into(),
            date: date.map(Into::into),
            article: article.map(Into::into),
        })
    }

    #[test]
    fn bwb_ids_and_links_to_wetten_overheid_nl_read_with_their_date_and_article() {
        // Real: the Wet op de zorgtoeslag (BWBR0018451) and the Algemene wet
        // bestuursrecht (BWBR0005537), as wetten.overheid.nl links them.
        assert_eq!(asked("BWBR0018451"), a("BWBR0018451", None, None));
        assert_eq!(
            asked("bwbr0018451@2025-06-01"),
            a("BWBR0018451", Some("2025-06-01"), None)
        );
        assert_eq!(asked("BWBR0018451#2"), a("BWBR0018451", None, Some("2")));
        assert_eq!(
            asked("https://wetten.overheid.nl/BWBR0018451/2025-06-01"),
            a("BWBR0018451", Some("2025-06-01"), None)
        );
        assert_eq!(
            asked("https://wetten.overheid.nl/BWBR0018451/2025-06-01#Artikel2"),
            a("BWBR0018451", Some("2025-06-01"), Some("2"))
        );
        assert_eq!(
            asked(
                "https://wetten.overheid.nl/BWBR0005537/2024-01-01/0/Hoofdstuk1/Titeldeel1.1/Afdeling1.1.1/Artikel1_1"
            ),
            a("BWBR0005537", Some("2024-01-01"), Some("1:1"))
        );
        assert_eq!(
            asked("https://wetten.overheid.nl/jci1.3:c:BWBR0005537&hoofdstuk=1&titeldeel=1.1&artikel=1:1"),
            a("BWBR0005537", None, Some("1:1"))
        );
        assert_eq!(asked("https://wetten.overheid.nl/zoeken"), None);
        assert_eq!(asked("CVDR112779_1"), None);
    }
}
